"""``gymforge export RUN --format xlsx``: the spreadsheet environment's final workbooks.

A run records actions, not files, so each spreadsheet episode of the run is replayed on a
fresh ``spreadsheet`` instance (replay is exact: a divergence refuses the whole export and
writes nothing) and the workbook it ends with is written as ``<episode_id>.xlsx`` with
``gymforge.envs.spreadsheet.xlsx.export_workbook``: formulas with their cached values, so
``pandas.read_excel`` reads the values. Episodes of other environments are counted and
left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from gymforge.core.errors import UserError
from gymforge.envs.spreadsheet.env import SpreadsheetEnv
from gymforge.envs.spreadsheet.xlsx import export_workbook
from gymforge.rollout.replay import replay_episode
from gymforge.trajectory.io import EpisodeLog, verify_chain

ENV_ID = SpreadsheetEnv.spec.id
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass
class WorkbookExport:
    written: list[Path] = field(default_factory=list)
    other_envs: int = 0


def file_name(episode_id: str) -> str:
    """A file name for an episode id (ids may hold ``/`` and ``:``)."""
    return _UNSAFE.sub("_", episode_id).strip("._") + ".xlsx"


async def final_workbooks(episodes: list[EpisodeLog]) -> tuple[dict[str, bytes], int]:
    """The final workbook of every spreadsheet episode, by file name, and the number of
    episodes of other environments. UserError on a divergence or a name clash."""
    books: dict[str, bytes] = {}
    others = 0
    for log in episodes:
        if not log.steps or log.steps[0].env_id != ENV_ID:
            others += 1
            continue
        verify_chain(log)
        env = SpreadsheetEnv()
        try:
            _, divergence = await replay_episode(env, log)
            if divergence is not None:
                raise UserError(
                    f"episode {log.episode_id} does not replay ({divergence.describe()}): "
                    "its final workbook is unknown; nothing written"
                )
            blob = export_workbook(env.book, env.db.now())
        finally:
            await env.close()
        name = file_name(log.episode_id)
        if name in books:
            raise UserError(f"two episodes map to the file name {name}; nothing written")
        books[name] = blob
    return books, others


def write_workbooks(books: dict[str, bytes], out: Path) -> list[Path]:
    """Write ``books`` into the directory ``out`` (created; existing files are refused)."""
    out.mkdir(parents=True, exist_ok=True)
    clash = sorted(name for name in books if (out / name).exists())
    if clash:
        raise UserError(f"{out} already holds {clash[:3]}; choose another --out")
    paths = []
    for name, blob in sorted(books.items()):
        path = out / name
        path.write_bytes(blob)
        paths.append(path)
    return paths
