"""The trajectory file of ``gymforge serve [--mcp] --record FILE``.

Every episode a client starts is written, finished or not: a finished one as the runner
writes it, an unfinished one when it ends some other way, truncated and unsuccessful with
its reason as ``failure_reason`` (``END_REASONS``), so an attempt an agent walks away from
still counts against it.

With a seal key (``$GYMFORGE_SEAL_KEY`` or ``--seal-key-file``, as for ``gymforge run``)
every record is sealed onto the file's keyed chain and the server's shutdown closes its
writing with a run seal: ``gymforge verify-log`` accepts the file, and refuses an edited
one; a server killed before its shutdown leaves a file that verifies but is *unfinished*.
An existing file is continued as ``--resume`` continues one (``recover_run``: a torn tail
cut off, every kept line's seal checked; a sealed file without the key, or an unsealed one
with a key, is refused), so one file never mixes sealed and unsealed records.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gymforge.trajectory.io import TrajectoryWriter, recover_run

END_REASONS: dict[str, str] = {
    "abandoned": "the client started another episode over it (a reset)",
    "session_closed": "the client closed its session or disconnected",
    "idle_timeout": "the reaper closed the session after --idle-timeout without a call",
    "request_timeout": "a call took over --request-timeout; the session was closed",
    "server_shutdown": "the server shut down with the episode open",
}
"""``failure_reason`` of an episode that ended without the environment ending it (the keys
are ``gymforge.core.errors.SERVED_STOP_REASONS``, which the trajectory check accepts as
episodes cut short by the policy)."""


@dataclass
class Recorder:
    """Where a server's episodes go: one trajectory file shared by its sessions (or none)."""

    writer: TrajectoryWriter | None
    run_id: str = field(default_factory=lambda: f"mcp-{secrets.token_hex(4)}")
    episodes_written: int = 0
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _closing: threading.Lock = field(default_factory=threading.Lock)
    _closed: bool = False

    async def write(self, records: list[dict[str, Any]]) -> None:
        """Append one episode, durably, off the event loop (one at a time: the file's
        chains run from episode to episode)."""
        if self.writer is not None:
            async with self._lock:
                await asyncio.to_thread(self.writer.write_episode, records)
                self.episodes_written += 1

    async def finish(self) -> None:
        """``close``, after any write in progress (at shutdown, once sessions are released)."""
        async with self._lock:
            await asyncio.to_thread(self.close)

    def close(self) -> None:
        """Seal this server's writing (with a key) and close the file; idempotent."""
        with self._closing:
            if self.writer is None or self._closed:
                return
            self._closed = True
            try:
                self.writer.seal_run(self.run_id)
            finally:
                self.writer.close()


def serve_recorder(record: Path | None, key: bytes | None, transport: str, env: str) -> Recorder:
    """``recorder_for`` a server: its run seal records the transport and environment."""
    return recorder_for(record, key, {"serve": transport, "env": env})


def recorder_for(
    record: Path | None, key: bytes | None = None, config: dict[str, Any] | None = None
) -> Recorder:
    """The recorder of ``--record`` (None: a recorder that keeps nothing). ``key`` seals;
    ``config`` is what the run seal records. An existing file is continued (see above)."""
    if record is None:
        return Recorder(None)
    state = None
    if record.exists() and record.stat().st_size > 0:
        _, state = recover_run(record, key)
    writer = TrajectoryWriter(record, append=True, key=key, config=config, state=state)
    return Recorder(writer)
