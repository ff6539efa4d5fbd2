"""throughput: a reset made slow by waiting fails however loaded the machine claims to be.

The old check divided every reset's wall time by the machine's slowdown, so a reset that
sleeps 300 ms passed the ledger's 20 ms budget on a machine measured 20x slow (300 / 20 =
15 ms). Now only the busy part of a reset is scaled; the idle part counts in full.
"""

from __future__ import annotations

import time

import pytest
from planted_seam import WaitingResetEnv

from gymforge.qa import QAOptions, QATarget, run_check
from gymforge.qa.checks import throughput
from gymforge.qa.checks.busy_clock import busy_seconds
from gymforge.qa.checks.machine_speed import MAX_SLOWDOWN, REFERENCE_SECONDS
from gymforge.qa.checks.throughput import ResetTime

FAST = QAOptions(episodes=8, fuzz_examples=10)


def test_waiting_reset_fails_on_a_loaded_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine claims the largest slowdown the check accepts; the waiting reset still
    fails, and the failure names the waiting."""
    monkeypatch.setattr(throughput, "measure_workload", lambda: REFERENCE_SECONDS * MAX_SLOWDOWN)
    result = run_check("throughput", QATarget.from_factory(WaitingResetEnv), FAST)
    assert not result.passed, result.details
    assert "dominated by waiting" in result.details
    assert result.metrics["reset_idle_p50_ms"] > result.metrics["reset_p50_ms"] / 2


def test_only_the_busy_part_is_scaled() -> None:
    busy = ResetTime(wall_ms=300.0, idle_ms=0.0)
    waiting = ResetTime(wall_ms=300.0, idle_ms=290.0)
    assert busy.judged_ms(MAX_SLOWDOWN) == pytest.approx(15.0)
    assert waiting.judged_ms(MAX_SLOWDOWN) == pytest.approx(290.5)
    assert waiting.judged_ms(1.0) == pytest.approx(300.0)


def test_busy_clock_tells_work_from_sleep() -> None:
    """Spinning is busy (CPU, or queued for one on a loaded machine); sleeping is idle.
    Ratios of one interval, not absolute times."""
    b0, t0 = busy_seconds(), time.perf_counter()
    while time.perf_counter() - t0 < 0.1:
        pass
    spin_wall, spin_busy = time.perf_counter() - t0, busy_seconds() - b0
    b0, t0 = busy_seconds(), time.perf_counter()
    time.sleep(0.2)
    sleep_wall, sleep_busy = time.perf_counter() - t0, busy_seconds() - b0
    assert spin_busy > 0.5 * spin_wall
    assert sleep_busy < 0.5 * sleep_wall
