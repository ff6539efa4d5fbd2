"""Appending sealed episodes to a trajectory file (JSONL), durably.

The writer validates every record against the schema models, seals each episode's digest
chain, and writes a whole episode with one ``write`` followed by ``flush`` and ``fsync``:
a run killed midway keeps every finished episode, and never leaves half of one.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any

from gymforge.trajectory.episode_encoding import seal_lines
from gymforge.trajectory.line_encoding import encode_line
from gymforge.trajectory.seal import ChainState


class TrajectoryWriter:
    """Appends sealed episodes to a JSONL file, durably.

    With ``key`` every line is also sealed onto the file's keyed chain (``state``: where an
    appended-to file's chain stands, from ``recover_run``), and ``seal_run`` closes an
    invocation with a run seal covering the whole file. Without a key ``seal_run`` writes
    nothing: the file keeps the unkeyed format of files written before seals existed.

    A continued file that ends with a run seal (``state.trailing``) has that line rewritten
    as ``continued`` before this writer's first line (``gymforge.trajectory.seal``): a
    writer that never writes leaves the file as it was."""

    def __init__(
        self,
        path: str | Path,
        *,
        append: bool = False,
        key: bytes | None = None,
        config: dict[str, Any] | None = None,
        state: ChainState | None = None,
    ) -> None:
        if state is not None and not append:
            raise ValueError("a chain state continues a file: pass append=True")
        self.path = Path(path)
        self.key = key
        self.config = dict(config or {})
        self.state = state or ChainState()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] = open(self.path, "a" if append else "w", encoding="utf-8")  # noqa: SIM115

    def write_episode(self, records: list[dict[str, Any]]) -> None:
        self._continue_seal()
        self._write(seal_lines(records, self.key, self.state))

    def encode_episode(self, records: list[dict[str, Any]]) -> list[str]:
        """The lines ``write_episode`` would write, the file's chain advanced past them:
        hand them to ``write_lines`` next (a writer that batches episodes into one fsync)."""
        self._continue_seal()
        return seal_lines(records, self.key, self.state)

    def write_lines(self, lines: list[str]) -> None:
        """Append lines from ``encode_episode``, in the order encoded, with one fsync."""
        self._write(lines)

    def seal_run(self, run_id: str, files: dict[str, str] | None = None) -> None:
        """End this invocation's writing with a run seal over the file so far (with a key),
        recording the sha256 of the run's documents ``files``."""
        if self.key is None:
            return
        self._continue_seal()
        body = self.state.run_seal_body(run_id, self.config, self.key, files)
        _, self.state.seal, line = encode_line("", body, self.key, self.state.seal)
        self.state.last_run_seal = self.state.seal
        self._write([line])

    def _continue_seal(self) -> None:
        """Rewrite the run seal the file ends with as ``continued``, in place on the chain."""
        trailing, self.state.trailing = self.state.trailing, None
        if trailing is None or self.key is None:
            return
        body = {k: v for k, v in trailing.raw.items() if k not in ("digest", "seal")}
        body["continued"] = True
        _, seal, line = encode_line("", body, self.key, trailing.before)
        self._fh.flush()
        os.truncate(self.path, trailing.offset)  # the handle appends: it writes at the new end
        self._write([line])
        self.state.seal = self.state.last_run_seal = seal

    def _write(self, lines: list[str]) -> None:
        self._fh.write("\n".join([*lines, ""]))  # each line and its newline, in one copy
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> TrajectoryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
