"""A ``harness-cmd:`` program, with the run's parent directory granted (``--harness-path``),
lists and reads the run's output directory while later rollouts of its group are still to
play: run by ``gymforge run`` on the local executor, and by a ``--backend redis`` worker
on the runner's host. Success would let a rollout read its siblings' recorded actions and
verdicts (copy a successful sibling's answer: reward without solving).
``test_harness_writes_run_dir`` runs through ``prepare`` alone, which hid the run; the
CLI resolves its policy before ``prepare`` and a Redis worker resolves its own, and
neither was told the run directory to hide."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("redis")

from redteam_harness import Accomplice, attack_command, attacker_dir, show

from gymforge.rollout.executors import executor_for
from gymforge.rollout.executors.redis_worker import worker
from gymforge.rollout.plan import prepare
from gymforge.rollout.runner import RunResult, run
from gymforge.rollout.spec import RunSpec
from gymforge.testing.openai_server import OpenAITestServer
from gymforge.testing.openai_server.fake import scripted_responder
from tests.rollout.redis_helpers import REDIS_SERVER, redis_server

pytestmark = pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed")


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    with redis_server(tmp_path) as url:
        yield url


def run_on_redis(url: str, policy: str, out: Path, options: dict[str, Any]) -> RunResult:
    with OpenAITestServer(scripted_responder(["I give up."])) as upstream:
        options = {"base_url": upstream.base_url, **options}
        spec = RunSpec(
            env="ledger",
            policy=policy,
            n=1,
            group=3,
            seed=11,
            out=out,
            max_retries=0,
            concurrency=1,
            backend="redis",
        )
        ready = prepare(spec, policy_options=options)
        executor = executor_for(
            ready.spec, ready.handle, ready.source, backend_url=url, policy_options=options
        )

        async def main() -> RunResult:
            stop = asyncio.Event()
            w = asyncio.create_task(worker(url, consumer="w0", block_ms=100, stop_event=stop))
            try:
                return await run(ready.spec, executor)
            finally:
                stop.set()
                await asyncio.wait_for(w, 30)
                if ready.source.close is not None:
                    await ready.source.close()

        return asyncio.run(main())


def run_dir(tmp_path: Path) -> tuple[Path, Path]:
    tmp_path.chmod(0o755)
    parent = tmp_path / "runs"
    parent.mkdir(mode=0o755)
    out = parent / "run"
    out.mkdir()
    out.chmod(0o755)
    return parent, out


def check(reports: list[dict[str, Any]]) -> None:
    assert len(reports) == 3
    for report in reports:
        assert "crashed" not in report, report
        assert report["listing"] == [], report["listing"]  # the run's files are not there
        assert all(v != "written" for v in report["writes"].values()), report["writes"]


def test_a_redis_workers_harness_cannot_read_the_run(redis_url: str, tmp_path: Path) -> None:
    parent, out = run_dir(tmp_path)
    with Accomplice() as acc, attacker_dir() as d:
        policy = attack_command("rundir", acc, d / "attacker.py", str(out))
        result = run_on_redis(redis_url, policy, out, {"paths": (str(parent),)})
        show(acc.reports)
    assert not result.errors, result.errors
    check(acc.reports)


def test_a_cli_runs_harness_cannot_read_the_run(gymforge_cli: Any, tmp_path: Path) -> None:
    parent, out = run_dir(tmp_path)
    with (
        Accomplice() as acc,
        attacker_dir() as d,
        OpenAITestServer(scripted_responder(["I give up."])) as upstream,
    ):
        policy = attack_command("rundir", acc, d / "attacker.py", str(out))
        r = gymforge_cli(
            "run", "ledger", "--policy", policy, "--base-url", upstream.base_url,
            "-n", "1", "-g", "3", "-c", "1", "--seed", "11", "--out", str(out), "--overwrite",
            "--harness-path", str(parent), "--json",
        )  # fmt: skip
        show(acc.reports)
    assert r.returncode == 0, r.stderr[-2000:]
    check(acc.reports)
