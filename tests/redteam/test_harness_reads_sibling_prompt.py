"""Two ``harness-cmd:`` episodes run at once (a GRPO group is many); each looks for the
other's prompt file next to its own, in the temp directory, and through other processes'
``GYMFORGE_PROMPT_FILE``; and again with the runner's temp directory granted
(``--harness-path /tmp``, where the episode directories are made). Success would hand one
episode another's task (and its tokens and URLs), the first step of sabotaging it."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from redteam_harness import Accomplice, attack_command, attacker_dir, run_attack, show


@pytest.mark.parametrize("granted", [False, True], ids=["tmp-not-granted", "tmp-granted"])
def test_harness_cannot_read_a_sibling_prompt(granted: bool, tmp_path: Path) -> None:
    options = {"paths": (tempfile.gettempdir(),)} if granted else {}
    with Accomplice() as acc, attacker_dir() as d:
        result = run_attack(
            attack_command("siblings", acc, d / "attacker.py"),
            tmp_path,
            n=2,
            concurrency=2,
            options=options,
        )
        show(acc.reports)
    assert not result.errors, result.errors
    assert len(acc.reports) == 2
    for report in acc.reports:
        assert "crashed" not in report, report
        assert report["sibling_prompts"] == {}, "a harness read another episode's prompt"
