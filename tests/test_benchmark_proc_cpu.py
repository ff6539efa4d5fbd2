"""``benchmarks/proc_cpu.process_cpu_s``: another process's CPU, read to the nanosecond (the
server CPU per step of ``serve_load.py`` and ``openai_concurrency.py``), not in the clock
ticks of ``/proc/PID/stat`` (10 ms each here: 8% of a short phase's server CPU)."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
import proc_cpu

CHILD = """
import sys, time
def burn(seconds):
    t = time.process_time()
    while time.process_time() - t < seconds:
        pass
for seconds in (0.0, 0.123, 0.031):
    burn(seconds)
    print(time.process_time(), flush=True)
    sys.stdin.readline()
"""


def _readings(read: object) -> list[tuple[float, float]]:
    """(the child's own CPU clock, ``read(pid)``) at each point where the child waits."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert child.stdin is not None and child.stdout is not None
    out = []
    try:
        for _ in range(3):
            own = float(child.stdout.readline())
            out.append((own, read(child.pid)))  # type: ignore[operator]
            child.stdin.write("\n")
            child.stdin.flush()
    finally:
        child.kill()
        child.wait()
    return out


def test_another_process_cpu_is_read_to_well_under_a_tick() -> None:
    """Between two waits the child's own clock and the reading move alike, to within 2 ms
    (what the child runs between reading its clock and blocking), where ticks are 10 ms."""
    readings = _readings(proc_cpu.process_cpu_s)
    for (own0, read0), (own1, read1) in itertools.pairwise(readings):
        assert read1 - read0 == pytest.approx(own1 - own0, abs=0.002)
        assert read0 >= own0 and read1 >= own1


def test_without_the_clock_the_ticks_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(clock: int) -> float:
        raise OSError(22, "Invalid argument")

    monkeypatch.setattr(proc_cpu.time, "clock_gettime", refused)
    readings = _readings(proc_cpu.process_cpu_s)
    for (own0, read0), (own1, read1) in itertools.pairwise(readings):
        assert read1 - read0 == pytest.approx(own1 - own0, abs=0.025)


def test_a_process_gone_is_an_error() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    with pytest.raises(OSError):
        proc_cpu.process_cpu_s(child.pid)
