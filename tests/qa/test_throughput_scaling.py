"""The throughput check judges an environment, not the machine's load: its figures are scaled by
the slowdown of a reference workload timed around each measurement, only ever in the
environment's favour, and never by more than ``MAX_SLOWDOWN``."""

from __future__ import annotations

from typing import Any

import pytest

from gymforge.envs.ledger import LedgerEnv
from gymforge.qa import QAOptions, QATarget, run_check
from gymforge.qa.checks import machine_speed, throughput
from gymforge.qa.checks.machine_speed import MAX_SLOWDOWN, REFERENCE_SECONDS, Slowdown
from gymforge.qa.checks.throughput import ResetTime

FAST = QAOptions(episodes=8, fuzz_examples=10)


def test_slowdown_only_relaxes_and_is_capped() -> None:
    ref = REFERENCE_SECONDS
    assert Slowdown(ref / 2, ref / 3).factor == 1.0  # a fast machine never tightens a budget
    assert Slowdown(2 * ref, 4 * ref).factor == pytest.approx(3.0)
    assert Slowdown(1000 * ref, 1000 * ref).factor == MAX_SLOWDOWN


def test_reference_workload_is_deterministic() -> None:
    assert machine_speed.reference_workload() == machine_speed.reference_workload()


def _fake_measure(rate: float, reset_ms: float) -> Any:
    """A measurement with fixed figures: ``rate`` steps/s and every reset ``reset_ms``."""

    async def measure(target: QATarget, pairs: list[tuple[str, int]], concurrency: int) -> Any:
        return [ResetTime(reset_ms, 0.0)] * len(pairs), int(rate), 1.0

    return measure


@pytest.mark.parametrize(
    ("raw_rate", "slowdown", "passes"),
    [(100.0, 1.0, False), (100.0, 4.0, True), (10.0, MAX_SLOWDOWN * 10, False)],
)
def test_loaded_machine_scales_the_figures(
    monkeypatch: pytest.MonkeyPatch, raw_rate: float, slowdown: float, passes: bool
) -> None:
    """LedgerEnv's budget is 300 steps/s: raw 100 steps/s passes only on a machine measured
    3x or more slower than the reference; raw 10 steps/s fails however slow the machine
    claims to be, because the scale is capped."""
    monkeypatch.setattr(throughput, "_measure", _fake_measure(raw_rate, 1.0))
    monkeypatch.setattr(throughput, "measure_workload", lambda: REFERENCE_SECONDS * slowdown)
    result = run_check("throughput", QATarget.from_factory(LedgerEnv), FAST)
    assert result.passed is passes, result.details
    assert result.metrics["machine_slowdown"] == min(slowdown, MAX_SLOWDOWN)
    if slowdown > 1:
        assert "slowdown" in result.details
