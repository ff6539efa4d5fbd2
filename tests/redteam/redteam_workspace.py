"""Shared pieces of the workspace-harness attacks (``test_workspace_*.py``): the hostile
program, copied world-readable, as a ``harness-cmd:`` policy, and its report (its final
message) from a real run's trajectory."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gymforge.trajectory.io import EpisodeLog, read_episodes

HERE = Path(__file__).resolve().parent
SYSTEM_PYTHON = "/usr/bin/python3"

sys.path.insert(0, str(HERE.parent / "harness"))  # workspace_helpers: the run itself


@contextmanager
def workspace_attacker(mode: str, *args: str) -> Iterator[str]:
    """The ``harness-cmd:`` policy of ``workspace_attacker.py MODE ARGS``."""
    d = Path(tempfile.mkdtemp(prefix="gymforge-redteam-workspace-"))
    try:
        os.chmod(d, 0o755)
        shutil.copyfile(HERE / "workspace_attacker.py", d / "attacker.py")
        os.chmod(d / "attacker.py", 0o644)
        yield f"harness-cmd:{SYSTEM_PYTHON} {d / 'attacker.py'} {mode} {' '.join(args)}".rstrip()
    finally:
        shutil.rmtree(d, ignore_errors=True)


def the_episode(out: Path) -> tuple[EpisodeLog, dict[str, Any]]:
    """The run's one episode and the attacker's report (its final message)."""
    [log] = read_episodes(out / "trajectories.jsonl")
    final = log.steps[-1].action
    assert final is not None and final.kind == "reply", final
    report = json.loads(final.text)  # type: ignore[union-attr]
    print(json.dumps(report, indent=1)[:6000], file=sys.stderr)
    assert "crashed" not in report, report
    return log, report
