"""A run whose policy server dies midway resumes cleanly, end to end.

The OpenAI-compatible test server runs as its own process, playing the ledger oracle, and
``gymforge run`` as another. Once a few episodes are in the trajectory file the server is
SIGKILLed. The run must stop with exit code 3, having written only whole, successful
episodes (none scored as a policy failure for the dead server). Then, with a new server on
the same port, ``--resume`` runs just the missing episodes: every (task, rollout) appears
once, the episodes written before the crash are untouched, and ``verify-log`` passes.

Marked ``slow`` (``make test-slow``): about 12 s of its 19 are the ``openai:`` policy's
default retries of each call cut by the kill (six attempts, backing off to 8 s), which the
CLI gives no flag to shorten. The default run keeps each part fast:
``tests/test_runner.py::test_a_dead_server_stops_the_run_and_resume_runs_the_rest`` (the
run stops with only whole, successful episodes; resume runs the rest, once each),
``tests/rollout/test_openai_policy.py::test_dead_server_is_infra_error`` and
``tests/cli/test_exit_codes.py`` (exit 3 naming ``--resume``).
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from gymforge.cli.common import INFRA_EXIT
from gymforge.registry.handle import open_env

HERE = Path(__file__).parent
N, GROUP, CONCURRENCY = 4, 2, 3
LATENCY = 0.1  # seconds per model call: a ledger episode takes about a second
CLI = [sys.executable, "-m", "gymforge.cli"]
WAIT = 30.0  # upper bound of every wait loop, in seconds


def start_server(
    task_ids: list[str], port: int = 0, hang_after: int | None = None
) -> tuple[subprocess.Popen[str], int]:
    """The test server in its own process, playing the ledger oracle for ``task_ids``;
    returns once it answers ``GET /v1/models``. With ``hang_after``, it stops answering
    once that many episodes have had their final reply."""
    args = [f"--responder-arg={t}" for t in task_ids]
    responder = "openai_helpers:ledger_replay_oracle"
    if hang_after is not None:
        responder = "openai_helpers:ledger_oracle_then_hang"
        args.insert(0, f"--responder-arg={hang_after}")
    python_path = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "gymforge.testing.openai_server"),
            *("--port", str(port), "--latency", str(LATENCY)),
            *("--responder", responder, *args),
        ],
        stdin=subprocess.PIPE,  # it serves until stdin closes (or it is killed)
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), *python_path])},
    )
    try:
        assert proc.stdout is not None
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            if not sel.select(WAIT):
                raise TimeoutError(f"the test server printed no port within {WAIT} s")
        line = proc.stdout.readline()
        assert line.startswith("PORT "), f"unexpected server output {line!r}"
        port = int(line.split()[1])
        deadline = time.monotonic() + WAIT
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                    return proc, port
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.05)
    except BaseException:
        kill(proc)
        raise


def kill(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen[str]]]:
    """Every process a test starts (servers, runs); each is killed at teardown."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for proc in started:
        kill(proc)


def run_cli(base_url: str, out: Path, *extra: str) -> subprocess.Popen[str]:
    """``gymforge run`` in its own process. ``--max-retries 0``: an episode the dead server
    failed is given up at once, not tried twice more (each try already spends the policy's
    own retries of every call)."""
    return subprocess.Popen(
        [
            *CLI,
            *("run", "ledger", "--policy", "openai:oracle-model", "--base-url", base_url),
            *("-n", str(N), "--group", str(GROUP), "--concurrency", str(CONCURRENCY)),
            *("--max-retries", "0", "--out", str(out), "--json", *extra),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        stdout, stderr = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, stderr = proc.communicate()
        pytest.fail(f"gymforge run did not end within 120 s:\n{stderr[-3000:]}")
    return proc.returncode, stdout, stderr


def episodes_in(path: Path) -> dict[tuple[str, int], list[str]]:
    """(task, rollout) -> the raw lines of its episode, steps then the episode record;
    every episode in the file must be whole and appear once."""
    found: dict[tuple[str, int], list[str]] = {}
    current: list[str] = []
    for line in path.read_text().splitlines():
        current.append(line)
        rec = json.loads(line)
        if rec["record"] == "episode":
            key = (rec["task_id"], rec["rollout"])
            assert key not in found, f"episode {key} written twice"
            assert {json.loads(x)["episode_id"] for x in current} == {rec["episode_id"]}
            found[key], current = current, []
    assert not current, "the file ends inside an episode"
    return found


@pytest.mark.slow
def test_a_run_whose_server_dies_midway_resumes_cleanly(
    tmp_path: Path, procs: list[subprocess.Popen[str]]
) -> None:
    task_ids = open_env("ledger", None).tasks.sample(N, 0, "train")  # what `run` samples
    first, port = start_server(task_ids, hang_after=2)  # no third episode can finish
    procs.append(first)
    base_url = f"http://127.0.0.1:{port}/v1"
    log = tmp_path / "trajectories.jsonl"

    run = run_cli(base_url, tmp_path)
    procs.append(run)
    deadline = time.monotonic() + WAIT
    while not (log.exists() and log.read_bytes().count(b'"record":"episode"') >= 2):
        assert run.poll() is None, f"the run ended before the kill:\n{finish(run)[2]}"
        assert time.monotonic() < deadline, "no episode was written in time"
        time.sleep(0.02)
    kill(first)  # SIGKILL: in-flight requests are cut, new connections refused
    code, stdout, stderr = finish(run)

    # a clear outcome: exit 3, a summary saying why, and only whole, scored episodes
    assert code == INFRA_EXIT, stderr[-3000:]
    assert "--resume" in stderr
    summary = json.loads(stdout)
    before, written = episodes_in(log), log.read_bytes()
    assert len(before) == 2
    assert summary["episodes"] == len(before)
    assert summary["infra_errors"] == N * GROUP - len(before)
    assert summary["infra_stopped"], "the run went on taking jobs with its server dead"
    for lines in before.values():
        end = json.loads(lines[-1])
        # the oracle never fails: a failure here would be the dead server scored
        assert end["success"] and end["failure_reason"] is None, end
    assert summary["success_rate"] == 1.0 and summary["failure_reasons"] == {}

    second, port2 = start_server(task_ids, port)
    procs.append(second)
    assert port2 == port
    resume = run_cli(base_url, tmp_path, "--resume")
    procs.append(resume)
    code, stdout, stderr = finish(resume)
    assert code == 0, stderr[-3000:]
    summary = json.loads(stdout)
    assert summary["resumed"] == len(before) and summary["infra_errors"] == 0
    assert summary["episodes"] == N * GROUP and summary["success_rate"] == 1.0

    after = episodes_in(log)
    assert log.read_bytes().startswith(written)
    keys = {(t, r) for t in task_ids for r in range(GROUP)}
    assert set(after) == keys  # each (task, rollout) exactly once (episodes_in checks)
    for key, lines in before.items():
        assert after[key] == lines, f"{key} was re-run or rewritten"
    assert len({json.loads(after[k][-1])["run_id"] for k in keys - set(before)}) == 1

    verified = subprocess.run(
        [*CLI, "verify-log", str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert verified.returncode == 0, verified.stderr
    assert f"{N * GROUP} episodes" in verified.stderr
