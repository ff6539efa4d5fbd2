"""A ``harness-cmd:`` program leaves a detached grandchild (its own session, re-parented
away from the harness) sleeping past the episode. Success would give it a process that
outlives the run: free to rewrite the run's files after the runner exits (and re-seal them
with a key it read), or to act in later episodes. Both endings are tried: the harness
exits, and the runner ends the episode while the harness still runs."""

from __future__ import annotations

import os
import secrets
import signal
import time
from pathlib import Path

import pytest
from redteam_harness import Accomplice, attack_command, attacker_dir, run_attack, show


def processes_with(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(entry))
    return found


@pytest.mark.parametrize("mode", ["survivor", "linger"])
def test_no_harness_process_survives_its_episode(mode: str, tmp_path: Path) -> None:
    marker = f"gf-survivor-{secrets.token_hex(6)}"
    options = {"wall_clock_s": 3.0, "grace_s": 0.2}  # "linger" never answers
    with Accomplice() as acc, attacker_dir() as d:
        policy = attack_command(mode, acc, d / "attacker.py", marker)
        result = run_attack(policy, tmp_path, options=options)
        show(acc.reports)
    assert not result.errors, result.errors
    [report] = acc.reports
    assert report.get("spawned") == marker, report  # the child was started
    survivors = processes_with(marker)
    for _ in range(50):  # the kernel kills the namespace's processes; reaping is asynchronous
        if not survivors:
            break
        time.sleep(0.1)
        survivors = processes_with(marker)
    for pid in survivors:  # started by this test: clean up before failing
        os.kill(pid, signal.SIGKILL)
    assert survivors == [], f"harness processes outlived the episode: {survivors}"
