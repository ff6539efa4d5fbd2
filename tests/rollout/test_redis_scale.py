"""The Redis backend at scale (``make test-slow``): real ``gymforge run --backend redis`` and
``gymforge worker`` processes on the cheap ``digits`` oracle, against a real ``redis-server``
on 127.0.0.1.

- 10,000 episodes through two workers, one SIGKILLed mid-run while it holds tasks: every
  job is written exactly once, every digest chain and seal verifies, nothing stays pending.
- 100,000 tasks: the coordinator keeps a bounded window, so the attempts waiting at once
  (``peak_in_flight``) and the task stream's length (``peak_task_stream``) stay within the
  window however many tasks the run has, and redis-server's peak memory stays under a
  third of what the run's tasks would take queued at once.

Each prints its throughput and peak memory (run with ``-s`` to see them); nothing asserts a
time.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

redis = pytest.importorskip("redis")

from redis_helpers import REDIS_SERVER, redis_server  # noqa: E402

from gymforge.rollout.executors.redis_worker import Streams  # noqa: E402
from gymforge.trajectory.check import check_file  # noqa: E402
from gymforge.trajectory.io import verify_chain  # noqa: E402

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed"),
]

SEAL_KEY = "redis scale seal key"
CLI = [sys.executable, "-m", "gymforge.cli"]
WORKER_SLOTS = 4  # each worker's -c
CONCURRENCY = 2 * WORKER_SLOTS  # the run's -c: every slot of both workers
WINDOW = 2 * CONCURRENCY  # RedisExecutor's default window


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    with redis_server(tmp_path) as url:
        yield url


def _env() -> dict[str, str]:
    return {**os.environ, "GYMFORGE_SEAL_KEY": SEAL_KEY}


def _worker(url: str, log: IO[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*CLI, "worker", "--redis", url, "-c", str(WORKER_SLOTS), "--reclaim-idle", "2"],
        stdout=subprocess.DEVNULL,
        stderr=log,
        text=True,
        env=_env(),
        start_new_session=True,
    )


def _coordinator(url: str, n: int, out: Path, log: IO[str]) -> subprocess.Popen[str]:
    args = ["--backend", "redis", "--redis", url, "-n", str(n), "-c", str(CONCURRENCY)]
    return subprocess.Popen(
        [*CLI, "run", "digits", "--policy", "oracle", *args, "--out", str(out), "--json"],
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        env=_env(),
    )


def _peak_rss_mb(pid: int) -> float:
    """The process's peak resident set so far (VmHWM), in MB; 0 once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _stop(*procs: subprocess.Popen[str]) -> None:
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=10)


def _finish(run: subprocess.Popen[str], timeout_s: float) -> tuple[dict[str, Any], float]:
    """Wait (bounded) for the coordinator; its summary and its peak RSS in MB."""
    deadline = time.monotonic() + timeout_s
    peak = 0.0
    while run.poll() is None:
        assert time.monotonic() < deadline, "the coordinator did not finish in time"
        peak = max(peak, _peak_rss_mb(run.pid))
        time.sleep(0.5)
    assert run.stdout is not None
    stdout = run.stdout.read()
    assert run.returncode == 0, stdout
    return json.loads(stdout), peak


def _kill_holding(
    doomed: subprocess.Popen[str], client: Any, streams: Streams, timeout_s: float = 60
) -> int:
    """SIGKILL ``doomed`` while it holds task entries: stop it, and kill it if its consumers
    have pending entries (else let it go on and look again). The entries it held."""
    prefix = f"-{doomed.pid}-"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        os.killpg(doomed.pid, signal.SIGSTOP)
        pending = client.xpending_range(streams.tasks, streams.group, "-", "+", 1000)
        held = [p for p in pending if prefix in p["consumer"]]
        if held:
            os.killpg(doomed.pid, signal.SIGKILL)
            doomed.wait(timeout=10)
            return len(held)
        os.killpg(doomed.pid, signal.SIGCONT)
        time.sleep(0.01)
    raise AssertionError("the doomed worker never held a task")


def _episodes_written(path: Path) -> int:
    if not path.exists():
        return 0
    with path.open("rb") as f:
        return sum(1 for line in f if b'"record":"episode"' in line)


def test_ten_thousand_episodes_two_workers_one_killed(redis_url: str, tmp_path: Path) -> None:
    n = 10_000
    out = tmp_path / "run"
    logs = {name: (tmp_path / f"{name}.log").open("w+") for name in ("run", "doomed", "live")}
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    streams = Streams()
    doomed = _worker(redis_url, logs["doomed"])
    live = _worker(redis_url, logs["live"])
    start = time.monotonic()
    run = _coordinator(redis_url, n, out, logs["run"])
    try:
        deadline = time.monotonic() + 300
        while _episodes_written(out / "trajectories.jsonl") < n // 4:  # mid-run
            assert run.poll() is None, "the run ended early"
            assert time.monotonic() < deadline, "the run made no progress"
            time.sleep(0.2)
        held = _kill_holding(doomed, client, streams)
        summary, peak_mb = _finish(run, 1800)
        elapsed = time.monotonic() - start
    finally:
        _stop(run, doomed, live)
    logs["live"].seek(0)
    said = logs["live"].read()
    print(
        f"\nredis 10k: {n} episodes in {elapsed:.1f} s ({n / elapsed:.0f} episodes/s), "
        f"coordinator peak RSS {peak_mb:.0f} MB, killed worker held {held} tasks, "
        f"peak_in_flight {summary['peak_in_flight']}, "
        f"peak_task_stream {summary['peak_task_stream']}"
    )
    assert summary["episodes"] == n and summary["success_rate"] == 1.0
    assert summary["infra_errors"] == 0
    assert said.count("took over") >= held  # the killed worker's tasks, by XAUTOCLAIM
    checked = check_file(out / "trajectories.jsonl", SEAL_KEY.encode())
    assert checked.finished and checked.run_seals == 1 and len(checked.episodes) == n
    keys = [(e.end.task_id, e.end.seed, e.end.rollout) for e in checked.episodes if e.end]
    assert len(keys) == n and len(set(keys)) == n  # each job written exactly once
    for episode in checked.episodes:
        verify_chain(episode)
    assert client.xpending(streams.tasks, streams.group)["pending"] == 0
    assert summary["peak_in_flight"] <= WINDOW
    client.close()


def test_a_hundred_thousand_tasks_stay_within_the_window(redis_url: str, tmp_path: Path) -> None:
    n = 100_000
    out = tmp_path / "run"
    logs = {name: (tmp_path / f"{name}.log").open("w+") for name in ("run", "w0", "w1")}
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    base_memory = int(client.info("memory")["used_memory"])
    workers = [_worker(redis_url, logs[f"w{i}"]) for i in range(2)]
    start = time.monotonic()
    run = _coordinator(redis_url, n, out, logs["run"])
    try:
        summary, peak_mb = _finish(run, 3600)
        elapsed = time.monotonic() - start
    finally:
        _stop(run, *workers)
    redis_peak = int(client.info("memory")["used_memory_peak"]) - base_memory
    print(
        f"\nredis 100k: {n} episodes in {elapsed:.1f} s ({n / elapsed:.0f} episodes/s), "
        f"coordinator peak RSS {peak_mb:.0f} MB, redis-server peak memory "
        f"+{redis_peak / 2**20:.1f} MB, peak_in_flight {summary['peak_in_flight']}, "
        f"peak_task_stream {summary['peak_task_stream']}"
    )
    assert summary["episodes"] == n and summary["tasks_queued"] == n
    assert summary["infra_errors"] == 0 and summary["success_rate"] == 1.0
    # structural: never more than the window waiting, never more than the window plus one
    # answered-but-not-yet-deleted entry per worker slot on the stream (was: all 100,000)
    assert 1 <= summary["peak_in_flight"] <= WINDOW
    assert 1 <= summary["peak_task_stream"] <= WINDOW + 2 * WORKER_SLOTS
    assert client.xlen(Streams().tasks) == 0
    # redis-server's own peak: 100,000 of these task entries on the stream at once take 11 MB
    assert redis_peak < 4 * 2**20
    checked = check_file(out / "trajectories.jsonl", SEAL_KEY.encode())
    assert checked.finished and len(checked.episodes) == n
    client.close()
