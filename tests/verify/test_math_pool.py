"""The worker pool: hard time bounds, crash recovery, concurrency and clean shutdown."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from math_cases import BOUNDED_MS, box

from gymforge.core.errors import InfraError, VerifierError
from gymforge.verify.math import JobResult, MathPool, MathVerifier

PATHOLOGICAL = {
    "power_tower": "9^{9^{9^{9}}}",
    "huge_factorial": "(10^{8})!",
    "million_digits": "7" * 1_000_000,
    "deep_nesting": "(" * 5000 + "1" + ")" * 5000,
    "exp_tower": "e^{e^{e^{e^{10}}}}",
    "ten_tower": "10^{10^{10}}",
    "big_binomial": "\\binom{10^{8}}{5\\cdot 10^{7}}",
    "huge_exponent_decimal": "1.0000001^{10^{12}}",
    "long_sum": "+".join(["99999"] * 2000),
    "many_boxes_nested": "\\sqrt{" * 40 + "2" + "}" * 40,
    "double_factorial_chain": "3!!!!!!!!",
    "sqrt_of_huge": "\\sqrt{" + "7" * 3999 + "}",
    "slow_evalf": "\\sin(e^{e^{14}})",
    "sqrt2_tower": "\\sqrt{2}^{\\sqrt{2}^{\\sqrt{2}^{\\sqrt{2}^{100}}}}",
}


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def _wait_dead(pids: list[int], seconds: float = 10.0) -> list[int]:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        alive = [p for p in pids if _alive(p)]
        if not alive:
            return []
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_pathological_inputs_are_bounded(verifier: MathVerifier, name: str) -> None:
    v = verifier.verify(box(PATHOLOGICAL[name]), "1")
    assert not v.passed
    assert v.reason in ("too_large", "timeout", "not_equal", "parse_error")
    assert v.facts["latency_ms"] <= BOUNDED_MS


@pytest.fixture(scope="module")
def hook_pool() -> Iterator[MathPool]:
    """One worker with the test-only ``sleep`` and ``segfault`` ops, shared by this module."""
    pool = MathPool(workers=1, test_hooks=True).start()
    yield pool
    pool.shutdown()


def test_timeout_kills_and_respawns(
    verifier: MathVerifier, math_pool: MathPool, hook_pool: MathPool
) -> None:
    """An input that is slow (not just large) hits the hard timeout; the pool recovers."""
    before = math_pool.stats["timeouts"]
    v = verifier.verify(box("\\sin(e^{e^{14}})"), "1")  # needs ~500,000 digits of pi
    assert v.reason == "timeout" and v.facts["latency_ms"] <= BOUNDED_MS
    assert math_pool.stats["timeouts"] == before + 1
    assert verifier.verify(box("2"), "2").passed
    before = hook_pool.stats["timeouts"]
    r = hook_pool.run({"op": "sleep", "seconds": 30}, timeout_s=0.3)
    assert r.status == "timeout" and r.latency_ms <= BOUNDED_MS
    assert hook_pool.stats["timeouts"] == before + 1
    assert hook_pool.run({"op": "ping"}).status == "ok"


def test_segfaulting_job_is_contained(hook_pool: MathPool) -> None:
    before = hook_pool.stats["crashes"]
    r = hook_pool.run({"op": "segfault"}, timeout_s=1.5)
    assert r.status == "crash" and r.attempts == 2
    assert hook_pool.stats["crashes"] == before + 2
    ok = MathVerifier(pool=hook_pool).verify(box("\\frac{2}{4}"), "0.5")
    assert ok.passed


def test_worker_killed_mid_job_is_retried(hook_pool: MathPool, tmp_path: Path) -> None:
    hook_pool.run({"op": "ping"})
    pid = hook_pool.pids()["workers"][0]
    started = tmp_path / "started"
    fut = hook_pool.submit({"op": "sleep", "seconds": 0.4, "touch": str(started)}, timeout_s=1.8)
    end = time.monotonic() + 10
    while not started.exists() and time.monotonic() < end:
        time.sleep(0.005)
    os.kill(pid, signal.SIGKILL)  # mid-job: the worker is sleeping inside it
    r = fut.result()
    assert r.status == "ok" and r.attempts == 2
    assert hook_pool.pids()["workers"][0] != pid


def test_worker_killed_while_idle_is_replaced(hook_pool: MathPool) -> None:
    hook_pool.run({"op": "ping"})
    pid = hook_pool.pids()["workers"][0]
    os.kill(pid, signal.SIGKILL)
    _wait_dead([pid])
    r = hook_pool.run({"op": "ping"})
    assert r.status == "ok" and r.attempts == 1


def test_zygote_death_is_recovered(hook_pool: MathPool) -> None:
    hook_pool.run({"op": "ping"})
    pids = hook_pool.pids()
    os.kill(pids["zygote"], signal.SIGKILL)
    assert _wait_dead([pids["zygote"], *pids["workers"]]) == []  # workers die with it
    assert hook_pool.run({"op": "ping"}, timeout_s=5).status == "ok"
    assert hook_pool.pids()["zygote"] != pids["zygote"]


def test_worker_is_recycled_after_max_jobs(hook_pool: MathPool) -> None:
    """Past ``max_jobs_per_worker`` a worker is replaced off the job's path: the next job
    runs on a fresh fork, first time (the replacement is ready before it is handed out)."""
    hook_pool.run({"op": "ping"})
    hook_pool.max_jobs_per_worker = 2
    try:
        pids = [hook_pool.run({"op": "ping"}) for _ in range(6)]
    finally:
        hook_pool.max_jobs_per_worker = 10_000
    assert all(r.status == "ok" and r.attempts == 1 for r in pids)
    seen = [r.value["pid"] for r in pids if r.value is not None]
    assert len(set(seen)) >= 3 and all(seen[i] == seen[i + 1] for i in (1, 3))


def test_zygote_imports_this_gymforge_not_one_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``python -c`` puts the working directory first on ``sys.path``: started from a
    directory holding another ``gymforge`` (a second checkout), the zygote would run that
    one's code, not the parent's, and fail or, worse, verify differently."""
    fake = tmp_path / "gymforge"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise SystemExit('the wrong gymforge')\n")
    monkeypatch.chdir(tmp_path)
    pool = MathPool(workers=1)
    try:
        assert MathVerifier(pool=pool).verify(box("\\frac{1}{2}"), "0.5").passed
    finally:
        pool.shutdown()


class _CrashingPool:
    """Stands in for a pool whose worker died twice on the job."""

    def run(self, payload: object, timeout_s: float = 1.0) -> JobResult:
        return JobResult("crash", None, latency_ms=3.0, queue_ms=0.0, attempts=2)

    async def arun(self, payload: object, timeout_s: float = 1.0) -> JobResult:
        return self.run(payload, timeout_s)


def test_crash_verdict_or_raise() -> None:
    v = MathVerifier(pool=_CrashingPool())  # type: ignore[arg-type]
    r = v.verify(box("1"), "1")
    assert r.reason == "worker_crash" and not r.passed and r.facts["latency_ms"] >= 3.0
    assert asyncio.run(v.averify(box("1"), "1")).reason == "worker_crash"
    with pytest.raises(VerifierError):
        MathVerifier(pool=_CrashingPool(), on_crash="raise").verify(box("1"), "1")  # type: ignore[arg-type]


def test_many_concurrent_coroutines(verifier: MathVerifier) -> None:
    golds = [f"\\frac{{{i}}}{{{i + 1}}}" for i in range(100)]

    async def main() -> tuple[list[bool], int]:
        ticks = 0
        done = asyncio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                await asyncio.sleep(0)

        t = asyncio.create_task(ticker())
        answers = [f"\\frac{{{2 * i}}}{{{2 * i + 2}}}" if i % 3 else f"{i}" for i in range(100)]
        verdicts = await asyncio.gather(
            *(verifier.averify(box(a), g) for a, g in zip(answers, golds, strict=True))
        )
        done.set()
        await t
        return [v.passed for v in verdicts], ticks

    passed, ticks = asyncio.run(main())
    assert passed == [bool(i % 3) or i == 0 for i in range(100)]
    assert ticks > 10  # the loop kept running while the workers computed


def test_concurrent_threads(verifier: MathVerifier) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(8) as ex:
        got = list(ex.map(lambda i: verifier.verify(box(str(i)), str(i % 7)).passed, range(40)))
    assert got == [i == i % 7 for i in range(40)]


def test_shutdown_leaves_no_process() -> None:
    pool = MathPool(workers=2)
    MathVerifier(pool=pool).verify(box("1"), "1")
    end = time.monotonic() + 10
    while len(pool.pids()["workers"]) < 2 and time.monotonic() < end:
        time.sleep(0.01)  # the second worker is forked in the background
    pids = pool.pids()
    everyone = [pids["zygote"], *pids["workers"]]
    assert len(everyone) == 3 and all(_alive(p) for p in everyone)
    pool.shutdown()
    assert _wait_dead(everyone, 2.0) == []
    with pytest.raises(InfraError):
        pool.submit({"op": "ping"})
    pool.shutdown()  # idempotent


def test_averify_starts_the_pool_off_the_event_loop() -> None:
    pool = MathPool(workers=1)
    v = MathVerifier(pool=pool)

    async def main() -> tuple[bool, int]:
        ticks = 0
        task = asyncio.ensure_future(v.averify(box("\\frac{4}{8}"), "0.5"))
        while not task.done():
            ticks += 1
            await asyncio.sleep(0.005)
        return (await task).passed, ticks

    try:
        passed, ticks = asyncio.run(main())
    finally:
        pool.shutdown()
    assert passed and ticks >= 5  # the interpreter and sympy start-up did not block the loop


_FORK_SCRIPT = textwrap.dedent(
    """
    import os
    from gymforge.verify.math import MathVerifier, default_pool
    v = MathVerifier()
    assert v.verify("\\\\boxed{2}", "2").passed
    parent_pool = default_pool()
    pid = os.fork()
    if pid == 0:  # the child gets a pool of its own; the parent's is left alone
        ok = default_pool() is not parent_pool and v.verify("\\\\boxed{3}", "3").passed
        default_pool().shutdown()
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert status == 0, status
    assert v.verify("\\\\boxed{4}", "4").passed and default_pool() is parent_pool
    print("ok")
    """
)


def test_forked_children_get_their_own_pool(tmp_path: Path) -> None:
    script = tmp_path / "fork_pool.py"
    script.write_text(_FORK_SCRIPT)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


_SCRIPT = textwrap.dedent(
    """
    import sys, time
    from gymforge.verify.math import MathVerifier, default_pool
    v = MathVerifier()
    assert v.verify("\\\\boxed{2}", "2").passed
    while len(default_pool().pids()["workers"]) < default_pool().size:
        time.sleep(0.01)
    p = default_pool().pids()
    print(p["zygote"], *p["workers"], flush=True)
    if sys.argv[1] == "hang":
        time.sleep(60)
    """
)


@pytest.mark.parametrize("ending", ["exit", "sigkill"])
def test_no_leftover_processes_after_the_parent_ends(tmp_path: Path, ending: str) -> None:
    script = tmp_path / "use_pool.py"
    script.write_text(_SCRIPT)
    arg = "hang" if ending == "sigkill" else "exit"
    proc = subprocess.Popen([sys.executable, str(script), arg], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    pids = [int(x) for x in proc.stdout.readline().split()]
    assert len(pids) >= 2
    if ending == "sigkill":
        proc.kill()  # no atexit: the zygote must notice on its own
    assert proc.wait(timeout=30) in (0, -signal.SIGKILL)
    assert _wait_dead(pids) == []
