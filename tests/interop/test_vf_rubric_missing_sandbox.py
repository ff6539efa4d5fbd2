"""Attack (by circumstance): run a Verifiers environment on a machine whose sandbox cannot
start.

A Verifiers rubric runs in the sandbox; without it every episode would end as a verifier
error while the run "succeeded" (or, worse, a fallback would score completions in-process
again). Success of this attack means a run starts, writes anything, or scores a completion
although the scorer sandbox cannot work; the defence is one line naming what is missing,
before any episode.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from interop_helpers import REPO, needs
from vf_attack import REF

pytestmark = needs("verifiers")


def test_a_sandboxed_rubric_without_bubblewrap_is_refused_before_the_first_episode(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run"
    env = dict(os.environ)
    env.pop("GYMFORGE_UNSAFE_NO_ISOLATION", None)
    env["GYMFORGE_BWRAP"] = str(tmp_path / "no-such-bwrap")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    args = ["run", REF, "--policy", "oracle", "-n", "2", "--out", str(out)]
    proc = subprocess.run(
        [sys.executable, "-m", "gymforge.cli", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-1500:])
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip() and "Map" not in ln]
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert "Verifiers rubrics" in lines[0] and "no-such-bwrap" in lines[0], lines[0]
    assert not (out / "trajectories.jsonl").exists()
