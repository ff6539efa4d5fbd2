"""A ``harness-cmd:`` program leaves a detached grandchild (its own session, re-parented
away from the harness) sleeping past the episode. Success would give it a process that
outlives the run: free to rewrite the run's files after the runner exits (and re-seal them
with a key it read), or to act in later episodes."""

from __future__ import annotations

import os
import secrets
import signal
import time
from pathlib import Path

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


def test_no_harness_process_survives_its_episode(tmp_path: Path) -> None:
    marker = f"gf-survivor-{secrets.token_hex(6)}"
    with Accomplice() as acc, attacker_dir() as d:
        result = run_attack(attack_command("survivor", acc, d / "attacker.py", marker), tmp_path)
        show(acc.reports)
    assert not result.errors, result.errors
    [report] = acc.reports
    assert report.get("spawned") == marker, report  # the grandchild was started
    survivors = processes_with(marker)
    for _ in range(50):  # the kernel kills the namespace's processes; reaping is asynchronous
        if not survivors:
            break
        time.sleep(0.1)
        survivors = processes_with(marker)
    for pid in survivors:  # started by this test: clean up before failing
        os.kill(pid, signal.SIGKILL)
    assert survivors == [], f"harness processes outlived the episode: {survivors}"
