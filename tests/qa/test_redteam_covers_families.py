"""``verifier_redteam`` draws a task of every family (up to ``MAX_SOURCES_COVERED``), so an
attack written for one family runs. Sampling visits the families in turn, and with four
tasks for five puzzle families no colouring was drawn: the three colouring cases were
reported "not applicable" on every default run, and a colouring checker that paid a
near miss would have passed QA."""

from __future__ import annotations

from gymforge.qa import QAOptions, QATarget, run_check
from gymforge.qa.checks.verifier_redteam import MAX_SOURCES_COVERED


def test_every_puzzle_familys_cases_run_on_the_default_options() -> None:
    target = QATarget.load("puzzles")
    assert target.tasks is not None
    assert 4 < len(target.tasks.families) <= MAX_SOURCES_COVERED
    result = run_check("verifier_redteam", target, QAOptions())
    assert result.passed, result.details
    unused = result.metrics["not_applicable"]
    assert not [name for name in unused if "coloring" in name or "colour" in name], unused
    assert not [name for name in unused if name.startswith("env.")], unused  # every case ran
