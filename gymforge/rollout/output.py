"""A run's output file: the writer, the seal key, and what a resumed file already holds.

Every executor's episodes reach disk through here, written by the runner alone: resume
keeps the finished episodes of an existing ``trajectories.jsonl`` (a torn tail dropped, the
seals verified) and continues its keyed chain.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gymforge.rollout.summary import summarize
from gymforge.trajectory.documents import document_digests, is_sealed
from gymforge.trajectory.io import TrajectoryWriter, recover_run, reseal
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


class GroupCommit:
    """The runner's writer: a group commit that never blocks the event loop.

    Episodes are encoded and sealed on the loop one at a time, yielding to the episodes in
    flight whenever it has held the loop ``SLICE_S`` (so their steps interleave with it,
    where a writer thread would take the interpreter from them in 5 ms slices; a yield per
    episode cost about 1% of a single-turn rollout's CPU), and written with one fsync per
    batch, on a worker thread: every episode that finished while the previous batch was
    being written goes into the next one.

    ``submit(records)`` hands an episode over at once; the future it returns is done once
    that episode is on disk (or holds the writer's error for it: a refused episode leaves no
    trace and the others are still written), so an episode is counted and reported only
    when a crash can no longer lose it. The file order is the order ``submit`` was called
    in."""

    SLICE_S = 0.001
    """The longest the encoding holds the event loop before it yields (it yields between
    episodes only: one episode is encoded whole)."""

    def __init__(self, writer: TrajectoryWriter) -> None:
        self.writer = writer
        self._pending: list[tuple[list[dict[str, Any]], asyncio.Future[None]]] = []
        self._flusher: asyncio.Task[None] | None = None

    def submit(self, records: list[dict[str, Any]]) -> asyncio.Future[None]:
        """Hand ``records`` over now; the future is the write's outcome (a runner's worker
        plays on while it is written, without a task per episode to wait for it)."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((records, done))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        return done

    async def drain(self) -> None:
        """Wait until every episode handed to ``submit`` is written (or failed)."""
        while self._flusher is not None and not self._flusher.done():
            await asyncio.wait([self._flusher])

    async def _flush(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            lines: list[str] = []
            encoded: list[asyncio.Future[None]] = []
            held = time.perf_counter()
            for records, done in batch:
                try:
                    lines += self.writer.encode_episode(records)
                    encoded.append(done)
                except Exception as err:
                    done.set_exception(err)
                if time.perf_counter() - held >= self.SLICE_S:
                    await asyncio.sleep(0)
                    held = time.perf_counter()
            try:
                await asyncio.to_thread(self.writer.write_lines, lines)
            except BaseException as err:
                _settle(encoded, err)
                if not isinstance(err, Exception):
                    raise
            else:
                _settle(encoded, None)


def _settle(futures: list[asyncio.Future[None]], err: BaseException | None) -> None:
    for done in futures:
        if done.done():
            continue
        if err is None:
            done.set_result(None)
        else:
            done.set_exception(err)


def seal_documents(out_dir: Path, seal_key: bytes | None) -> bool:
    """Re-seal ``out_dir``'s finished sealed run over its documents as they are now (once a
    command has written ``eval.json`` or ``calibration.json`` beside it); ``seal_key``,
    else ``$GYMFORGE_SEAL_KEY``. False, writing nothing, without a key or a finished sealed
    ``trajectories.jsonl`` (those documents stay unsealed, and readers say so)."""
    key = seal_key if seal_key is not None else load_key()
    path = out_dir / TRAJECTORIES
    if key is None or not path.is_file() or not is_sealed(path):
        return False
    return reseal(path, key, document_digests(out_dir))
