"""Follow a run directory while it is written: the state behind ``gymforge view``.

:class:`RunFollower` tails ``trajectories.jsonl`` from a byte offset. Each :meth:`poll`
reads only what was appended since the last one and consumes complete lines only, so a
line the writer has half written is read on the next poll, never parsed torn. A finished
episode becomes one :class:`~gymforge.evaluate.episodes.EpisodeStats` plus the byte range
of its lines: an open episode's records are held until it ends, a finished one's are re-read
from the file when someone opens it, so memory grows by one small entry per episode, not by
the trajectories. A line that is not valid JSON
or breaks the trajectory schema is reported in :attr:`RunState.problems` and skipped;
the rest of the file is still followed. A file that shrinks or is replaced (``--resume``
rewrites it, ``--overwrite`` removes it) is read again from the start.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gymforge.evaluate.episodes import EpisodeStats, stats_from_records
from gymforge.evaluate.folder import FolderOracle, folder_document
from gymforge.trajectory.schema import LINE_ADAPTER, EpisodeRecord, RunSealRecord, load_line

TRAJECTORIES = "trajectories.jsonl"
MAX_PROBLEMS = 50


@dataclass(frozen=True)
class Finished:
    """One finished episode: its stats and where its lines are in the file."""

    stats: EpisodeStats
    start: int
    end: int


@dataclass
class RunState:
    """What the follower knows about the run now. ``version`` grows whenever anything a
    page shows has changed, so a client can skip refetching an unchanged view."""

    version: int = 0
    finished: list[Finished] = field(default_factory=list)
    open_episodes: dict[str, int] = field(default_factory=dict)
    open_records: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    lines: int = 0
    manifest: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)

    @property
    def expected(self) -> int | None:
        """Episodes the run will play, from its manifest (None when it has none yet)."""
        run, tasks = self.manifest.get("run"), self.manifest.get("tasks")
        if not isinstance(run, dict) or not isinstance(tasks, list):
            return None
        return len(tasks) * int(run.get("group", 1)) * int(run.get("epochs", 1))

    summary_mtime: float = 0.0
    trajectories_mtime: float = 0.0

    @property
    def done(self) -> bool:
        """The run wrote its summary after its last trajectory line, and no episode is
        open (a resumed run's old summary does not count)."""
        return (
            bool(self.summary)
            and self.summary_mtime >= self.trajectories_mtime
            and not self.open_episodes
        )


class RunFollower:
    """Incremental reader of one run directory; thread-safe (:meth:`poll` and readers
    take one lock)."""

    def __init__(self, run_dir: str | Path) -> None:
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / TRAJECTORIES
        self.lock = threading.Lock()
        self.state = RunState()
        self._offset = 0
        self._inode: int | None = None
        self._meta_mtimes: dict[str, float] = {}
        self._document: tuple[int, dict[str, Any]] | None = None
        self.oracle = FolderOracle(self.run_dir / "manifest.json")

    def poll(self) -> bool:
        """Read what was appended since the last poll; True if the state changed."""
        with self.lock:
            changed = self._read_meta()
            try:
                st = os.stat(self.path)
            except FileNotFoundError:
                if self._inode is not None:
                    self._restart(None)
                    return True
                return changed
            if self._inode != st.st_ino or st.st_size < self._offset:
                self._restart(st.st_ino)
                changed = True
            if st.st_size > self._offset:
                changed = self._read_from(self._offset) or changed
            if self.state.trajectories_mtime != st.st_mtime:
                self.state.trajectories_mtime = st.st_mtime
                changed = True
            if changed:
                self.state.version += 1
            return changed

    def _restart(self, inode: int | None) -> None:
        version = self.state.version + 1
        old = self.state
        self.state = RunState(
            version=version,
            manifest=old.manifest,
            summary=old.summary,
            summary_mtime=old.summary_mtime,
        )
        self._offset, self._inode, self._document = 0, inode, None

    def _read_meta(self) -> bool:
        changed = False
        for name in ("manifest", "summary"):
            f = self.run_dir / f"{name}.json"
            try:
                mtime = f.stat().st_mtime
            except FileNotFoundError:
                continue
            if self._meta_mtimes.get(name) == mtime:
                continue
            try:
                data = json.loads(f.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue  # mid-write: read again on the next poll
            self._meta_mtimes[name] = mtime
            setattr(self.state, name, data if isinstance(data, dict) else {})
            if name == "summary":
                self.state.summary_mtime = mtime
            changed = True
        return changed

    def _read_from(self, offset: int) -> bool:
        with open(self.path, "rb") as fh:
            fh.seek(offset)
            chunk = fh.read()
        complete = chunk[: chunk.rfind(b"\n") + 1]
        if not complete:
            return False
        position = offset
        for line in complete.splitlines(keepends=True):
            self._line(line, position)
            position += len(line)
        self._offset = position
        return True

    def _line(self, line: bytes, position: int) -> None:
        state = self.state
        state.lines += 1
        if not line.strip():
            return
        try:
            raw = load_line(line)
            record = LINE_ADAPTER.validate_python(raw)
        except (ValueError, ValidationError) as err:
            reason = str(err).splitlines()[0][:200]
            if len(state.problems) < MAX_PROBLEMS:
                state.problems.append(
                    f"line {state.lines}: skipped, not a trajectory record ({reason})"
                )
            return
        if isinstance(record, RunSealRecord):
            return
        episode_id = record.episode_id
        start = state.open_episodes.setdefault(episode_id, position)
        records = state.open_records.setdefault(episode_id, [])
        records.append(raw)  # held only while the episode is open
        if isinstance(record, EpisodeRecord):
            del state.open_episodes[episode_id], state.open_records[episode_id]
            state.finished.append(
                Finished(
                    stats_from_records(records, self.oracle(record.task_id)),
                    start,
                    position + len(line),
                )
            )

    def _records(self, start: int, end: int, episode_id: str) -> list[dict[str, Any]]:
        with open(self.path, "rb") as fh:
            fh.seek(start)
            data = fh.read(end - start)
        out = []
        for line in data.splitlines():
            try:
                raw = load_line(line)
            except ValueError:
                continue
            if isinstance(raw, dict) and raw.get("episode_id") == episode_id:
                out.append(raw)
        return out

    def episode(self, index: int) -> list[dict[str, Any]] | None:
        """The raw records of the ``index``-th finished episode (file order), or None."""
        with self.lock:
            if not 0 <= index < len(self.state.finished):
                return None
            f = self.state.finished[index]
            return self._records(f.start, f.end, f.stats.episode_id)

    def document(self) -> dict[str, Any]:
        """The analysis of the episodes finished so far, by ``folder.folder_document`` (what
        ``eval`` writes to ``eval.json`` for the same folder), once per state version."""
        with self.lock:
            version = self.state.version
            if self._document is not None and self._document[0] == version:
                return self._document[1]
            stats = [f.stats for f in self.state.finished]
            manifest, summary = self.state.manifest, self.state.summary
        doc = folder_document(manifest, summary, stats)
        if self.oracle.reason:
            doc["warnings"].append(self.oracle.reason)
        with self.lock:
            self._document = (version, doc)
        return doc

    def close(self) -> None:
        """Close the environment opened for oracle path lengths, if any."""
        self.oracle.close()
