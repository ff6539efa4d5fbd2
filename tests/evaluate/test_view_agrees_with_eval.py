"""Issue 34, finding 2: ``gymforge view`` shows the figures ``eval`` wrote to ``eval.json``
and ``report`` shows for the same folder (pass@k for the run's k, pass^k, step efficiency),
counts the episodes in flight of a live run, and refuses a bad or busy ``--port`` in one
line (exit 2).

Each test starts a real view server on 127.0.0.1 and stops it."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from eval_helpers import run_cli

from gymforge.envs.ledger import LedgerEnv
from gymforge.evaluate.live_server import ViewServer
from gymforge.evaluate.report import Run, summary_section
from gymforge.rollout import LocalExecutor, OraclePolicy, RunSpec, run
from gymforge.rollout.executors.base import Records
from gymforge.rollout.jobs import Job

SKILL = "skilled:1=0.9,2=0.6,3=0.3"
FIGURES = ("episodes", "success", "pass@k", "pass^k", "k", "reward", "steps", "by_family")


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as r:
        body: str = r.read().decode()
        return body


@pytest.fixture(scope="module")
def eval_k2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("view-eval") / "e"
    res = run_cli("eval", "ledger", "--policy", SKILL, "-n", "4", "-k", "2", "--out", out)
    assert res.code == 0, res.stderr
    return out


def test_the_view_of_an_eval_folder_shows_eval_json(eval_k2: Path) -> None:
    written = json.loads((eval_k2 / "eval.json").read_text())
    assert written["metrics"]["k"] == 2
    assert written["metrics"]["steps"]["efficiency"]["mean"] is not None
    with ViewServer(eval_k2, interval=0.1) as server:
        overview = fetch(server.url + "fragment/overview")
        # the page's summary row is the report's summary row for this folder, cell for cell
        report_row = summary_section([Run("e", eval_k2, written, None)])
        assert "(k=2)" in overview
        assert report_row in overview
        shown = json.loads(fetch(server.url + "api/eval"))
    for name in FIGURES:
        assert shown["metrics"][name] == written["metrics"][name], name
    assert shown["failures"] == written["failures"] and shown["review"] == written["review"]


class Held:
    """Plays ledger episodes, each held until the test releases it."""

    name = "held"

    def __init__(self) -> None:
        self.inner = LocalExecutor(LedgerEnv, OraclePolicy)
        self.release = threading.Event()
        self.started = threading.Semaphore(0)

    def capacity(self, spec: RunSpec, jobs: int) -> int:
        return spec.concurrency

    async def open(self, spec: RunSpec, run_id: str) -> None:
        await self.inner.open(spec, run_id)

    async def play(self, job: Job) -> Records:
        self.started.release()
        while not self.release.is_set():
            await asyncio.sleep(0.01)
        return await self.inner.play(job)

    async def close(self) -> None:
        await self.inner.close()

    def stats(self) -> dict[str, Any]:
        return {}


def test_in_flight_counts_the_episodes_being_played(tmp_path: Path) -> None:
    tasks = LedgerEnv.tasks.sample(3, 5)
    spec = RunSpec(env="ledger", policy="oracle", tasks=tasks, out=tmp_path, concurrency=3)
    executor = Held()
    runner = threading.Thread(target=lambda: asyncio.run(run(spec, executor)), daemon=True)
    with ViewServer(tmp_path, interval=0.05) as server:
        runner.start()
        for _ in range(3):
            assert executor.started.acquire(timeout=60)
        state: dict[str, Any] = {}
        for _ in range(600):  # the count is published within a tenth of a second
            state = json.loads(fetch(server.url + "api/state"))
            if state["in_flight"] == 3:
                break
            threading.Event().wait(0.05)
        assert state["in_flight"] == 3 and state["finished"] == 0, state
        executor.release.set()
        runner.join(timeout=120)
        assert not runner.is_alive()
        for _ in range(600):
            state = json.loads(fetch(server.url + "api/state"))
            if state["finished"] == 3:
                break
            threading.Event().wait(0.05)
        assert state["finished"] == 3 and state["in_flight"] == 0, state
    assert not (tmp_path / "live.json").exists()


def test_a_busy_or_bad_port_is_one_error_line(eval_k2: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        res = run_cli("view", eval_k2, "--port", str(port))
    assert res.code == 2, (res.code, res.stderr)
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and str(port) in lines[0], lines
    res = run_cli("view", eval_k2, "--port", "70000")
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert res.code == 2 and len(lines) == 1 and lines[0].startswith("error:"), res.stderr
