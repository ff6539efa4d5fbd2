"""``harness-cmd:`` confinement: where bubblewrap cannot confine the harness, the policy
refuses to start in one line naming what is missing; what a confined harness sees; and the
per-episode tokens of the proxy."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from typer.testing import CliRunner

from gymforge.cli import app
from gymforge.sandbox.backend import IsolationUnavailableError
from gymforge.sandbox.confine import Confinement, confinement_problem
from gymforge.serve.harness.confine import gymforge_paths, harness_confinement
from gymforge.serve.harness.policy import harness_policy_factory
from gymforge.serve.proxy.server import ProxyConfig, ProxyServer
from gymforge.testing.openai_server import OpenAITestServer


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[str]:
    missing = str(tmp_path / "no-bwrap-here")
    monkeypatch.setenv("GYMFORGE_BWRAP", missing)
    confinement_problem.cache_clear()
    yield missing
    confinement_problem.cache_clear()


def test_no_bubblewrap_means_no_harness_cmd(no_bwrap: str) -> None:
    with pytest.raises(IsolationUnavailableError) as err:
        harness_policy_factory("harness-cmd:true", base_url="http://127.0.0.1:9/v1")
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("harness-cmd: cannot confine the harness here:")
    assert f"GYMFORGE_BWRAP={no_bwrap} is not an executable bubblewrap" in message
    # an in-process harness: (the user's own code, run by the runner) needs no sandbox
    harness_policy_factory("harness:json:dumps", base_url="http://127.0.0.1:9/v1")


def test_the_cli_refuses_in_one_line(no_bwrap: str, tmp_path: Path) -> None:
    args = ["run", "ledger", "-n", "1", "--policy", "harness-cmd:true", "--base-url"]
    r = CliRunner().invoke(app, [*args, "http://127.0.0.1:9/v1", "--out", str(tmp_path / "r")])
    assert r.exit_code != 0
    assert "cannot confine the harness here" in r.output
    assert "not an executable bubblewrap" in r.output
    assert not (tmp_path / "r" / "trajectories.jsonl").exists()


def test_a_harness_sees_only_what_it_is_given(tmp_path: Path) -> None:
    """The confinement of ``python agent.py``: the interpreter, the named file, its own
    episode directory; the seal key and gymforge hidden."""
    os.environ["GYMFORGE_SEAL_KEY"] = "never-in-a-harness"
    try:
        c = harness_confinement(
            f"{sys.executable} {tmp_path / 'agent.py'} --out={tmp_path}",
            tmp_path / "episode",
            {"OPENAI_API_KEY": "episode-token"},
        )
    finally:
        del os.environ["GYMFORGE_SEAL_KEY"]
    assert set(c.env) <= {"PATH", "LANG", "LC_ALL", "HOME", "OPENAI_API_KEY"}
    assert c.env["HOME"] == "/episode"
    assert str(tmp_path) in c.read_only  # named on the command line (--out=PATH)
    assert c.writable == ((str(tmp_path / "episode"), "/episode"),)
    import gymforge

    assert str(Path(gymforge.__path__[0]).resolve()) in c.hidden
    cmd = c.command(["/bin/true"])
    assert "--clearenv" in cmd and "never-in-a-harness" not in json.dumps(cmd)
    assert gymforge_paths([]) == [str(Path(p).resolve()) for p in gymforge.__path__]


@pytest.mark.skipif(os.getuid() != 0, reason="stands in for another user through setpriv")
def test_confinement_as_an_unprivileged_runner() -> None:
    """The path taken when gymforge does not run as root (a user namespace, nested ones
    disabled, no capabilities), run here as another uid through ``setpriv``."""
    uid = 63_001
    root = Path(tempfile.mkdtemp(prefix="gymforge-test-unprivileged-"))
    root.chmod(0o755)  # that runner's own directory: reachable by it
    episode = root / "episode"
    episode.mkdir()
    os.chown(episode, uid, uid)
    try:
        _run_unprivileged(uid, episode)
    finally:
        shutil.rmtree(root)


def _run_unprivileged(uid: int, episode: Path) -> None:
    c = Confinement(env={"PATH": "/usr/bin:/bin"}, chdir="/tmp", writable=((str(episode), "/e"),))
    script = "id -u; echo hi > /e/x; unshare -Ur true 2>/dev/null || echo no-userns; ls /proc"
    with mock.patch("os.getuid", return_value=uid):
        cmd = c.command(["/bin/sh", "-c", script])
    drop = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]
    r = subprocess.run([*drop, *cmd], capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split()
    assert lines[0] == str(uid) and "no-userns" in lines
    assert (episode / "x").read_text() == "hi\n"
    assert len([p for p in lines[2:] if p.isdigit()]) <= 4  # its own processes only


def test_an_episode_token_opens_only_its_episode() -> None:
    with OpenAITestServer() as upstream:
        config = ProxyConfig(upstream=upstream.base_url, token="the-operator-token")
        with ProxyServer(config) as proxy:
            status, opened = _http("POST", proxy.url + "/episodes", {"episode_id": "a"})
            assert status == 200 and opened["base_url"].endswith("/e/a/v1")
            mine = opened["token"]
            proxy.open_episode("b")
            chat = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
            assert _http("POST", opened["base_url"] + "/chat/completions", chat, mine)[0] == 200
            assert _http("GET", proxy.url + "/e/a/v1/models", None, mine)[0] == 200
            other = proxy.base_url("b") + "/chat/completions"
            assert _http("POST", other, chat, mine)[0] == 403
            assert (
                _http("PUT", proxy.url + "/weight_version", {"weight_version": "x"}, mine)[0] == 403
            )
            assert _http("GET", proxy.url + "/episodes/a", None, mine)[0] == 403
            assert _http("POST", proxy.url + "/episodes", {"episode_id": "c"}, mine)[0] == 403
            assert proxy.weight_version is None
            assert len(proxy.transcript("a").turns) == 1 and proxy.transcript("b").turns == []


def _http(method: str, url: str, body: Any, token: str = "the-operator-token") -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Authorization", f"Bearer {token}")
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


@pytest.mark.skipif(confinement_problem() is not None, reason="bubblewrap cannot confine here")
def test_a_runner_working_under_tmp_starts_its_harness(tmp_path: Path) -> None:
    """A runner whose working directory is under ``/tmp`` (a checkout there, a job's scratch
    directory) starts its harness there: the harness's ``/tmp`` is a fresh tmpfs, so the
    directory is made empty inside it rather than assumed."""
    work = Path(tempfile.mkdtemp(prefix="gf-runner-cwd-", dir="/tmp"))
    try:
        c = Confinement(env={"PATH": "/usr/bin:/bin"}, chdir=str(work))
        done = subprocess.run(
            c.command(["/bin/sh", "-c", "pwd; ls -A"]), capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines() == [str(work)]  # there, and empty
    finally:
        shutil.rmtree(work, ignore_errors=True)
