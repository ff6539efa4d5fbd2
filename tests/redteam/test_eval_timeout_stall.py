"""Attack, through the public command: ``gymforge run swe --episode-timeout`` with a policy
that solves half the tasks and, on the other half, only waits (``run_command sleep``, each
call within its own limit) until the episode is over its timeout. An episode over
``--episode-timeout`` was an infrastructure error: retried, then written as nothing, so the
policy's failures left the denominator and the summary said 100% (the run exited 3, and
``--resume`` replays the same stall). Success of the attack would be a success rate above
50%, or fewer than both episodes counted.

Two tasks, one of each: two of each (played one at a time) waited out the 10 s timeout twice
to prove the same. (Played at once with ``--concurrency``, an oracle episode beside the
stalls ran past the timeout on a loaded machine: one at a time it is.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from swe_attack import calc_task_file

POLICY = Path(__file__).with_name("swe_half_stall.py")


def test_a_stalled_episode_is_a_counted_failure(gymforge_cli: Any, tmp_path: Path) -> None:
    tasks = calc_task_file(tmp_path / "data", rows=2)
    out = tmp_path / "out"
    proc = gymforge_cli(
        "run",
        "swe",
        "-n",
        "2",
        "--dataset",
        str(tasks),
        "--policy",
        f"{POLICY}:policy",
        "--episode-timeout",
        "10",
        "--max-retries",
        "1",
        "--out",
        str(out),
        timeout=600,
    )
    print("exit", proc.returncode, proc.stderr[-1500:])
    summary = json.loads((out / "summary.json").read_text())
    print({k: v for k, v in summary.items() if not isinstance(v, dict)})
    assert summary["episodes"] == 2, summary
    assert summary["success_rate"] == 0.5, summary
    closing = [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    reasons = {r["task_id"]: r["failure_reason"] for r in closing if r.get("record") == "episode"}
    assert reasons == {"calc-0": None, "calc-1": "episode_timeout"}, reasons
    assert proc.returncode == 0, proc.stderr[-3000:]
