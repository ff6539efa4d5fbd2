"""Attack (by circumstance): run a reasoning-gym dataset on a machine whose sandbox cannot
start.

reasoning-gym's scorers run in the sandbox; without it every episode would end as a verifier
error while the run "succeeded" (or, worse, a fallback would score answers in-process again).
Success of this attack means a run starts, writes anything, or scores an answer although the
scorer sandbox cannot work; the defence is one line naming what is missing, before any
episode. Datasets judged by gymforge's strict verifiers need no sandbox and still run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def test_a_sandboxed_scorer_without_bubblewrap_is_refused_before_the_first_episode(
    gymforge_cli: Any, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    env: dict[str, str | None] = {
        "GYMFORGE_BWRAP": str(tmp_path / "no-such-bwrap"),
        "GYMFORGE_UNSAFE_NO_ISOLATION": None,
    }
    args = ("--policy", "oracle", "-n", "2", "--out")
    proc = gymforge_cli("run", "reasoning-gym:leg_counting", *args, str(out), env=env, timeout=300)
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-1500:])
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert "gymforge sandbox doctor" in lines[0] and "no-such-bwrap" in lines[0], lines[0]
    assert not (out / "trajectories.jsonl").exists()
    other = str(tmp_path / "strict")
    strict = gymforge_cli("run", "reasoning-gym:sudoku", *args, other, env=env, timeout=300)
    assert strict.returncode == 0, strict.stderr[-1500:]
