"""A run's output file: the writer, the seal key, and what a resumed file already holds.

Every executor's episodes reach disk through here, written by the runner alone: resume
keeps the finished episodes of an existing ``trajectories.jsonl`` (a torn tail dropped, the
seals verified) and continues its keyed chain.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gymforge.rollout.summary import summarize
from gymforge.trajectory.io import TrajectoryWriter, recover_run
from gymforge.trajectory.seal import ChainState, load_key

log = logging.getLogger("gymforge.runner")

TRAJECTORIES = "trajectories.jsonl"
SUMMARY = "summary.json"


@dataclass
class Output:
    """Where the trajectories go, the seal key, and what a resumed file already holds."""

    path: Path | None
    resume: bool
    key: bytes | None
    previous: list[dict[str, Any]] = field(default_factory=list)
    state: ChainState | None = None

    @property
    def done(self) -> set[tuple[str, int, int]]:
        """The job keys of the finished episodes kept from a resumed file."""
        return {(e["task_id"], e["seed"], e.get("rollout", 0)) for e in self.previous}

    def writer(self, config: dict[str, Any] | None) -> TrajectoryWriter | None:
        """The writer (None without a path), continuing a resumed file's keyed chain;
        ``config`` is what its run seal records."""
        if self.path is None:
            return None
        return TrajectoryWriter(
            self.path, append=self.resume, key=self.key, config=config, state=self.state
        )


def prepare_output(out_dir: Path | None, resume: bool, seal_key: bytes | None) -> Output:
    """Resolve the seal key (``seal_key``, else ``$GYMFORGE_SEAL_KEY``) and, for a resumed
    file, keep its finished episodes (the torn tail dropped, the seals verified)."""
    path = out_dir / TRAJECTORIES if out_dir is not None else None
    out = Output(path, resume, seal_key if seal_key is not None else load_key())
    if path is not None and resume and path.exists():
        out.previous, out.state = recover_run(path, out.key)
        log.info("resume: %d episodes kept", len(out.previous))
    return out


def write_summary(out_dir: Path | None, summary: dict[str, Any]) -> None:
    if out_dir is not None:
        (out_dir / SUMMARY).write_text(json.dumps(summary, indent=2) + "\n")


def interrupted_summary(
    out_dir: Path | None, config: dict[str, Any], seal_key: bytes | None
) -> dict[str, Any]:
    """The summary of the episodes a stopped run wrote (the file's torn tail, if any, is cut
    off, and its seals checked, as ``--resume`` would), written to ``out/summary.json``."""
    episodes = prepare_output(out_dir, True, seal_key).previous
    summary = summarize(episodes, **config)
    summary["interrupted"] = True
    write_summary(out_dir, summary)
    return summary
