"""``gymforge view``: the follower reads a run while it is written, the server serves it, and
a real headless chromium sees the page update as episodes finish."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from gymforge.core.errors import UserError
from gymforge.envs.ledger import LedgerEnv
from gymforge.evaluate.episodes import load_stats, oracle_path_lengths
from gymforge.evaluate.follow import RunFollower
from gymforge.evaluate.live_server import ViewServer
from tests.evaluate.eval_helpers import CHROMIUM, chromium_args, run_cli

LEDGER_ORACLE = oracle_path_lengths(LedgerEnv())
"""What eval gives each episode too: the view opens the run's (built-in) environment."""


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run: 6 ledger tasks x 2 rollouts by the random policy."""
    out = tmp_path_factory.mktemp("run") / "r"
    res = run_cli("run", "ledger", "--policy", "random", "-n", "6", "--group", "2", "--out", out)
    assert res.code == 0, res.stderr
    return out


def episode_line_ends(data: bytes) -> list[int]:
    """Byte offsets just past each episode record's line."""
    ends, pos = [], 0
    for line in data.splitlines(keepends=True):
        pos += len(line)
        if json.loads(line).get("record") == "episode":
            ends.append(pos)
    return ends


def copy_meta(src: Path, dst: Path) -> None:
    dst.mkdir(parents=True, exist_ok=True)
    shutil.copy(src / "manifest.json", dst / "manifest.json")


def test_follower_reads_only_complete_lines_as_the_file_grows(
    finished_run: Path, tmp_path: Path
) -> None:
    data = (finished_run / "trajectories.jsonl").read_bytes()
    ends = episode_line_ends(data)
    assert len(ends) == 12
    live = tmp_path / "live"
    copy_meta(finished_run, live)
    follower = RunFollower(live)
    assert not follower.poll() or follower.state.finished == []
    assert follower.state.expected == 12
    target = live / "trajectories.jsonl"
    cut = ends[4] + 37  # five episodes, then part of the sixth's first line
    target.write_bytes(data[:cut])
    assert follower.poll()
    assert len(follower.state.finished) == 5
    assert len(follower.state.open_episodes) == 0  # the torn line is not read yet
    torn = data.index(b"\n", ends[7]) + 1 + 5  # the ninth's first line, part of its second
    with open(target, "ab") as fh:
        fh.write(data[cut:torn])
    follower.poll()
    assert len(follower.state.finished) == 8
    assert len(follower.state.open_episodes) == 1  # the ninth began
    with open(target, "ab") as fh:
        fh.write(data[torn:])
    follower.poll()
    got = [f.stats for f in follower.state.finished]
    assert got == load_stats(finished_run / "trajectories.jsonl", LEDGER_ORACLE)
    assert follower.state.open_episodes == {}
    assert follower.state.problems == []
    assert not follower.state.done  # no summary yet
    shutil.copy(finished_run / "summary.json", live / "summary.json")
    os.utime(live / "summary.json")
    follower.poll()
    assert follower.state.done
    records = follower.episode(3)
    assert records is not None and records[-1]["episode_id"] == got[3].episode_id
    assert records[0]["step"] == 0 and records[-1]["record"] == "episode"
    assert follower.episode(12) is None and follower.episode(-1) is None


def test_follower_reports_a_bad_line_and_keeps_the_rest(finished_run: Path, tmp_path: Path) -> None:
    data = (finished_run / "trajectories.jsonl").read_bytes()
    ends = episode_line_ends(data)
    live = tmp_path / "live"
    copy_meta(finished_run, live)
    bad = b'{"record": "step", "not": "a record"}\nnot json at all\n'
    (live / "trajectories.jsonl").write_bytes(data[: ends[2]] + bad + data[ends[2] :])
    follower = RunFollower(live)
    follower.poll()
    assert len(follower.state.finished) == 12
    assert len(follower.state.problems) == 2
    first_bad = data[: ends[2]].count(b"\n") + 1
    assert follower.state.problems[0].startswith(f"line {first_bad}: skipped")
    assert follower.state.problems[1].startswith(f"line {first_bad + 1}: skipped")
    doc = follower.document()
    assert doc["metrics"]["episodes"] == 12


def test_follower_starts_over_when_the_file_is_replaced(finished_run: Path, tmp_path: Path) -> None:
    data = (finished_run / "trajectories.jsonl").read_bytes()
    ends = episode_line_ends(data)
    live = tmp_path / "live"
    copy_meta(finished_run, live)
    target = live / "trajectories.jsonl"
    target.write_bytes(data)
    follower = RunFollower(live)
    follower.poll()
    assert len(follower.state.finished) == 12
    target.write_bytes(data[: ends[2]])  # shrunk in place (a resume keeps what verified)
    follower.poll()
    assert len(follower.state.finished) == 3
    target.unlink()
    follower.poll()
    assert follower.state.finished == []
    replacement = live / "new.jsonl"
    replacement.write_bytes(data[: ends[5]])
    replacement.rename(target)  # a new inode
    follower.poll()
    assert len(follower.state.finished) == 6


def get(url: str, host: str | None = None) -> tuple[int, str, str]:
    req = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers["Content-Type"], r.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.headers["Content-Type"], err.read().decode()


def test_server_routes(finished_run: Path) -> None:
    with ViewServer(finished_run, interval=0.1) as server:
        url = server.url
        assert url.startswith("http://127.0.0.1:")
        status, kind, page = get(url)
        assert status == 200 and kind.startswith("text/html")
        assert "<script src='/app.js'></script>" in page and "script-src 'self'" in page
        status, kind, js = get(url + "app.js")
        assert status == 200 and "text/javascript" in kind and "/api/state" in js
        state = json.loads(get(url + "api/state")[2])
        assert state["finished"] == 12 and state["expected"] == 12
        assert state["status"] == "finished" and state["in_flight"] == 0
        rows = json.loads(get(url + "api/episodes?after=10")[2])["episodes"]
        assert [r["index"] for r in rows] == [10, 11]
        assert rows[0]["family"] == "ledger.transfer"
        overview = get(url + "fragment/overview")[2]
        for needle in ("Success and reward per family", "ledger.transfer", "<svg", "no_change"):
            assert needle in overview
        status, _, episode = get(url + "fragment/episode/0")
        assert status == 200 and episode.startswith("<details")
        assert get(url + "fragment/episode/12")[0] == 404
        assert get(url + "fragment/episode/x")[0] == 404
        assert get(url + "api/episodes?after=x")[0] == 400
        assert get(url + "nope")[0] == 404
        port = url.rsplit(":", 1)[1].rstrip("/")
        assert get(url + "api/state", host=f"evil.example:{port}")[0] == 421


def test_view_refuses_bad_arguments(tmp_path: Path) -> None:
    f = tmp_path / "file.txt"
    f.write_text("x")
    with pytest.raises(UserError, match="not a directory"):
        ViewServer(f)
    with pytest.raises(UserError, match="--interval"):
        ViewServer(tmp_path, interval=0)
    res = run_cli("view", f)
    assert res.code == 2 and "not a directory" in res.stderr


class Browser:
    """A headless chromium driven over the DevTools protocol (no browser download)."""

    def __init__(self, url: str, profile: Path) -> None:
        from websockets.sync.client import connect

        self.proc = subprocess.Popen(
            [
                *chromium_args(profile),
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                url,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        port_file = profile / "DevToolsActivePort"
        port = self._wait(lambda: self._port(port_file))
        pages = self._wait(lambda: self._pages(int(port)))
        self.stack = ExitStack()
        self.ws = self.stack.enter_context(
            connect(pages[0]["webSocketDebuggerUrl"], max_size=None, open_timeout=30)
        )
        self.ids = 0

    @staticmethod
    def _port(port_file: Path) -> str | None:
        """The port chromium wrote, or None until it has (the file exists before its
        first line is written)."""
        words = port_file.read_text().split() if port_file.exists() else []
        return words[0] if words and words[0].isdigit() else None

    def _pages(self, port: int) -> list[dict[str, Any]] | None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as r:
                targets: list[dict[str, Any]] = json.load(r)
        except OSError:
            return None
        return [t for t in targets if t.get("type") == "page"] or None

    @staticmethod
    def _wait(probe: Any, timeout: float = 60.0) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = probe()
            if got:
                return got
            time.sleep(0.1)
        raise AssertionError("timed out waiting for chromium")

    def eval(self, expression: str) -> Any:
        self.ids += 1
        self.ws.send(
            json.dumps(
                {
                    "id": self.ids,
                    "method": "Runtime.evaluate",
                    "params": {"expression": expression, "returnByValue": True},
                }
            )
        )
        while True:
            msg = json.loads(self.ws.recv(timeout=30))
            if msg.get("id") == self.ids:
                return msg["result"]["result"].get("value")

    def until(self, expression: str, timeout: float = 60.0) -> Any:
        return self._wait(lambda: self.eval(expression), timeout)

    def close(self) -> None:
        self.stack.close()
        self.proc.terminate()
        self.proc.wait(timeout=30)


@pytest.fixture
def browser_for() -> Iterator[Any]:
    opened: list[Browser] = []

    def launch(url: str, profile: Path) -> Browser:
        b = Browser(url, profile)
        opened.append(b)
        return b

    yield launch
    for b in opened:
        b.close()


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium is not installed (scripts/setup.sh installs it: apt-get install chromium)",
)
def test_page_follows_the_run_in_headless_chromium(
    finished_run: Path, tmp_path: Path, browser_for: Any
) -> None:
    data = (finished_run / "trajectories.jsonl").read_bytes()
    ends = episode_line_ends(data)
    live = tmp_path / "live"
    copy_meta(finished_run, live)
    target = live / "trajectories.jsonl"
    target.write_bytes(data[: ends[3]])
    with ViewServer(live, interval=0.1) as server:
        b = browser_for(server.url, tmp_path / "profile")
        b.until("document.getElementById('finished').textContent === '4'")
        assert b.eval("document.getElementById('expected').textContent") == "12"
        assert b.eval("document.getElementById('status').textContent") == "running"
        assert b.until("document.querySelectorAll('#episodes tr').length") == 4
        assert "ledger.transfer" in b.until("document.getElementById('overview').textContent")
        with open(target, "ab") as fh:
            fh.write(data[ends[3] :])
        shutil.copy(finished_run / "summary.json", live / "summary.json")
        os.utime(live / "summary.json")
        b.until("document.getElementById('status').textContent === 'finished'")
        assert b.until("document.querySelectorAll('#episodes tr').length === 12")
        newest = b.eval("document.querySelector('#episodes tr').dataset.index")
        assert newest == "11"  # newest first
        assert b.eval("document.querySelectorAll('#overview svg').length") >= 3
        b.eval("document.querySelector('#episodes tr').click()")
        text = b.until("document.querySelector('#episode-view details[open]')?.textContent")
        assert "episode #11" in text and "reward" in text


RANDOM_30 = ("--policy", "random", "-n", "30", "--out")


def test_follows_a_run_the_runner_is_writing(tmp_path: Path) -> None:
    """The real writer, a real CLI process: the view ends where the finished file does."""
    out = tmp_path / "r"
    with ViewServer(out, interval=0.05) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gymforge.cli", "run", "ledger", *RANDOM_30, str(out)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        seen: set[int] = set()
        deadline = time.monotonic() + 120
        state: dict[str, Any] = {}
        while time.monotonic() < deadline:
            state = json.loads(get(server.url + "api/state")[2])
            seen.add(state["finished"])
            if state["status"] == "finished" and state["finished"] == 30:
                break
            time.sleep(0.05)
        _, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr
        assert state["status"] == "finished" and state["expected"] == 30, state
        assert state["problems"] == []
        finished = [f.stats for f in server.follower.state.finished]
        assert finished == load_stats(out / "trajectories.jsonl", LEDGER_ORACLE)
        assert max(seen) == 30
