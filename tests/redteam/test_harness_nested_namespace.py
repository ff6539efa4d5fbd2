"""A ``harness-cmd:`` program unshares a new user namespace (and a mount namespace), and
attaches ptrace to a process of its own. Success would give it root inside namespaces of its
making (mounts, more namespaces: the kernel attack surface the project's sandbox refuses to
every job) and a debugger's hold over processes; confined, it gets EPERM for each."""

from __future__ import annotations

from pathlib import Path

from redteam_harness import Accomplice, attack_command, attacker_dir, run_attack, show


def test_the_harness_cannot_make_namespaces_or_trace(tmp_path: Path) -> None:
    with Accomplice() as acc, attacker_dir() as d:
        result = run_attack(attack_command("userns", acc, d / "attacker.py"), tmp_path)
        show(acc.reports)
    assert not result.errors, result.errors
    [report] = acc.reports
    assert "crashed" not in report, report
    assert report["unshare_user"] == "Operation not permitted", report
    assert report["unshare_mount"] == "Operation not permitted", report
    assert report["ptrace"] == "Operation not permitted", report
