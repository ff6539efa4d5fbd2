"""Wire format shared by the host and the in-sandbox zygote. Standard library only: this file is
copied into every sandbox and imported by ``python3 -I -S``, so it must not import gymforge.

**Frames** (host <-> zygote <-> job child) are length-prefixed and binary-light::

    u32 total | u32 header_len | header (JSON, utf-8) | (u32 blob_len | blob bytes)*

The header is a small JSON object; bulk bytes (stdin, stdout, files, compiled artefacts, encoded
return values) travel as blobs and are never JSON-escaped.

**Plain values** (arguments and return values) are ``plainvalues``'s, and the builtins the
harness pins ``pinned_builtins``'s; both are imported from here too.
"""

from __future__ import annotations

import json
import os
import select
import struct
import time
from typing import TYPE_CHECKING, Any

# The sandbox imports this file as ``wire`` with ``plainvalues`` and ``pinned_builtins`` its
# siblings; the host as part of the package.
if TYPE_CHECKING or __package__:
    from gymforge.sandbox import pinned_builtins, plainvalues
else:  # pragma: no cover - inside the sandbox
    import pinned_builtins
    import plainvalues

# the names of the plain-values codec and of the pinned builtins this module has always had
PINNED = pinned_builtins.PINNED
pin_builtins = pinned_builtins.pin_builtins
MAX_DEPTH = plainvalues.MAX_DEPTH
MAX_ITEMS = plainvalues.MAX_ITEMS
MAX_SAME_HASH = plainvalues.MAX_SAME_HASH
Unserialisable = plainvalues.Unserialisable
encode_plain = plainvalues.encode_plain
dumps_plain = plainvalues.dumps_plain
loads_plain = plainvalues.loads_plain
decode_plain = plainvalues.decode_plain
unflooded = plainvalues.unflooded

__all__ = [
    "MAX_DEPTH",
    "MAX_FRAME",
    "MAX_ITEMS",
    "MAX_SAME_HASH",
    "PINNED",
    "SMALL_READ",
    "FrameError",
    "FrameReader",
    "FrameStream",
    "Unserialisable",
    "decode_plain",
    "dumps_plain",
    "encode_plain",
    "flat",
    "loads_plain",
    "pack_frame",
    "pin_builtins",
    "read_frame",
    "unflooded",
    "unpack_body",
    "unpack_frame",
    "write_all",
]

_U32 = struct.Struct(">I")
MAX_FRAME = 1 << 30
SMALL_READ = 1 << 16  # one read's size while the frame being read is no larger


class FrameError(Exception):
    """A frame was malformed, oversized, or the stream ended in the middle of one."""


def pack_frame(header: dict[str, Any], blobs: tuple[bytes, ...] | list[bytes] = ()) -> bytes:
    """Serialise one frame: ``header`` must be JSON-serialisable, ``blobs`` are raw bytes."""
    head = json.dumps(header, separators=(",", ":"), allow_nan=False).encode()
    parts = [b"", _U32.pack(len(head)), head]
    for blob in blobs:
        parts.append(_U32.pack(len(blob)))
        parts.append(bytes(blob))
    body_len = sum(len(p) for p in parts)
    parts[0] = _U32.pack(body_len)
    return b"".join(parts)


def unpack_body(body: bytes) -> tuple[dict[str, Any], list[bytes]]:
    """Split a frame body (everything after the total length) into header and blobs."""
    if len(body) < 4:
        raise FrameError("frame too short")
    (head_len,) = _U32.unpack_from(body, 0)
    if 4 + head_len > len(body):
        raise FrameError("header overruns frame")
    try:
        header = json.loads(body[4 : 4 + head_len])
    except (ValueError, RecursionError) as e:
        raise FrameError(f"bad header: {e}") from None
    if not isinstance(header, dict):
        raise FrameError("header is not an object")
    blobs: list[bytes] = []
    pos = 4 + head_len
    while pos < len(body):
        if pos + 4 > len(body):
            raise FrameError("truncated blob length")
        (n,) = _U32.unpack_from(body, pos)
        pos += 4
        if pos + n > len(body):
            raise FrameError("blob overruns frame")
        blobs.append(body[pos : pos + n])
        pos += n
    return header, blobs


def unpack_frame(data: bytes) -> tuple[dict[str, Any], list[bytes]]:
    """One whole frame (e.g. a datagram): its length prefix must match. Raises ``FrameError``."""
    if len(data) < 4 or _U32.unpack_from(data, 0)[0] != len(data) - 4:
        raise FrameError("datagram is not one whole frame")
    return unpack_body(data[4:])


class FrameReader:
    """Incremental decoder for a non-blocking stream. ``feed`` returns complete frames.

    ``max_frame`` bounds the size a peer may announce; a larger announcement raises
    :class:`FrameError` at once, before any of it is buffered.
    """

    def __init__(self, max_frame: int = MAX_FRAME) -> None:
        self.max_frame = max_frame
        self._buf = bytearray()
        self.error: FrameError | None = None

    def feed(self, data: bytes) -> list[tuple[dict[str, Any], list[bytes]]]:
        """Complete frames in arrival order. Frames before a bad one are still returned; the
        error is then kept in ``error`` (and raised by the next ``feed``): the stream is dead.
        """
        if self.error is not None:
            raise self.error
        self._buf += data
        out = []
        try:
            while len(self._buf) >= 4:
                (n,) = _U32.unpack_from(self._buf, 0)
                if n > self.max_frame:
                    raise FrameError(f"frame of {n} bytes exceeds the {self.max_frame}-byte cap")
                if len(self._buf) < 4 + n:
                    break
                body = bytes(self._buf[4 : 4 + n])
                del self._buf[: 4 + n]
                out.append(unpack_body(body))
        except FrameError as e:
            self.error = e
            if not out:
                raise
        return out

    @property
    def pending(self) -> int:
        return len(self._buf)

    @property
    def wanted(self) -> int:
        """Bytes still missing from the frame being read (its length prefix first)."""
        if len(self._buf) < 4:
            return 4 - len(self._buf)
        n: int = _U32.unpack_from(self._buf, 0)[0]
        return max(4 + n - len(self._buf), 1)


class FrameStream:
    """Frames from a blocking fd, read in large chunks (usually one ``read`` per frame).
    ``recv`` raises ``TimeoutError`` once ``deadline`` (``time.monotonic()``) passes and
    ``FrameError`` on EOF or garbage."""

    def __init__(self, fd: int, max_frame: int = MAX_FRAME) -> None:
        self.fd = fd
        self.reader = FrameReader(max_frame)
        self.ready: list[tuple[dict[str, Any], list[bytes]]] = []

    def recv(self, deadline: float | None = None) -> tuple[dict[str, Any], list[bytes]]:
        while not self.ready:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                    raise TimeoutError("no reply before the deadline")
            chunk = os.read(self.fd, _chunk_size(self.reader.wanted))
            if not chunk:
                raise FrameError("stream closed")
            self.ready.extend(self.reader.feed(chunk))
        return self.ready.pop(0)


def _chunk_size(wanted: int) -> int:
    """How much to ask one ``read`` for: a small frame whole (and what follows it) in one
    small read; a large one in chunks of at most 1 MiB. ``os.read`` allocates the size it is
    asked for, and a 1 MiB allocation costs ~50 us: a request's whole round trip otherwise."""
    return SMALL_READ if wanted <= SMALL_READ else min(wanted, 1 << 20)


def write_all(fd: int, data: bytes) -> None:
    """Write every byte to a blocking fd (retries short writes)."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def read_frame(
    fd: int, deadline: float | None = None, max_frame: int = MAX_FRAME
) -> tuple[dict[str, Any], list[bytes]]:
    """Read one frame from a blocking fd. Raises ``TimeoutError`` once ``deadline``
    (a ``time.monotonic()`` value) passes and ``FrameError`` on EOF or garbage."""
    head = _read_exact(fd, 4, deadline)
    (n,) = _U32.unpack(head)
    if n > max_frame:
        raise FrameError(f"frame of {n} bytes exceeds the {max_frame}-byte cap")
    return unpack_body(_read_exact(fd, n, deadline))


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes:
    chunks: list[bytes] = []
    got = 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError("no reply before the deadline")
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            raise FrameError("stream closed")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def flat(rec: dict[str, Any], keys: tuple[str, ...], max_str: int = 2000) -> dict[str, Any]:
    """The ``keys`` of a record a job wrote whose values are scalars (strings cut to
    ``max_str``): all the zygote forwards of a job's control records, so what the host decodes
    of them is bounded in depth and size whatever the job put there."""
    out: dict[str, Any] = {}
    for k in keys:
        v = rec.get(k)
        if type(v) is str:
            out[k] = v[:max_str]
        elif v is None or type(v) in (bool, int, float):
            out[k] = v
    return out


pin_builtins(globals())
