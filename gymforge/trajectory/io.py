"""Writing and reading trajectory files (JSONL), with validation and the digest chain: the
import path of the pieces, which live in modules of their own.

- ``episode_encoding``: an episode's records validated and encoded as chained lines;
- ``line_encoding``: one line's bytes, with its digest (and seal) set;
- ``writer``: ``TrajectoryWriter``, appending whole episodes durably;
- ``reader``: reading records and episodes back, and checking an episode's chain;
- ``recovery``: continuing a file (``--resume``) and sealing a finished one again.
"""

from __future__ import annotations

from gymforge.trajectory.episode_encoding import seal_episode
from gymforge.trajectory.reader import (
    EpisodeLog,
    read_episodes,
    read_records,
    sealed_log,
    verify_chain,
)
from gymforge.trajectory.recovery import recover_finished, recover_run, reseal
from gymforge.trajectory.writer import TrajectoryWriter

__all__ = [
    "EpisodeLog",
    "TrajectoryWriter",
    "read_episodes",
    "read_records",
    "recover_finished",
    "recover_run",
    "reseal",
    "seal_episode",
    "sealed_log",
    "verify_chain",
]
