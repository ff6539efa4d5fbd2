"""A ``harness-cmd:`` program opens thousands of connections to its own proxy through its
network relay and holds them open. Each one costs the runner a unix socket, a TCP
connection to the proxy and the proxy's side of it: success would run the runner out of
file descriptors (its limit is shared by every episode's sandbox jobs, the proxy, the
records being written), failing its siblings' episodes or the run from inside one
episode. The relay serves a bounded number of connections per episode."""

from __future__ import annotations

import os
from pathlib import Path

from redteam_harness import Accomplice, attack_command, attacker_dir, run_attack, show

from gymforge.serve.harness.netrelay import MAX_CONNECTIONS

HELD = 500


def test_a_harness_cannot_hold_the_runners_files(tmp_path: Path) -> None:
    before = len(os.listdir("/proc/self/fd"))
    with Accomplice() as acc, attacker_dir() as d:
        policy = attack_command("hold", acc, d / "attacker.py", str(HELD))
        result = run_attack(policy, tmp_path, options={"wall_clock_s": 60.0})
        show(acc.reports)
    assert not result.errors, result.errors
    [report] = acc.reports
    assert "crashed" not in report, report
    assert report["held"] + report["failed"] == HELD
    grew = report["runner_fds"] - before  # the run's own files, and the held connections'
    assert grew < 3 * MAX_CONNECTIONS + 200, (grew, report)  # unbounded: 3 per connection
    assert report["alive"] < HELD // 4, report  # the rest were closed as they came
