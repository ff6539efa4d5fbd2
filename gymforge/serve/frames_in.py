"""Client frames read without ``websockets``' parser, for the commonest chunk a socket read
gives a session: one or more whole, final, unfragmented text or binary frames.

``whole_data_frames`` reads a chunk the way ``websockets``' ``Frame.parse`` reads each frame
of it on a server (RFC 6455: two header bytes, a 16- or 64-bit length after 126 or 127, the
4-byte mask, the payload, unmasked by ``websockets``' own ``apply_mask``) and accepts a
chunk only when every frame in it is one ``websockets`` would deliver as a message without
any other effect: FIN set, no reserved bit, a text or binary opcode, the mask bit set, a
length within the size cap, and no byte left over. Anything else (a control frame, a
fragment, a partial frame, an unmasked frame, one over the cap) gives None, and the caller
feeds the chunk to ``websockets`` as before, which then answers for it: pongs, closes,
protocol errors, the 1009 of the cap. ``gymforge.serve.ws_fast`` uses it only while
``websockets``' parser waits for a frame with nothing buffered, so either reads the same
bytes from a frame boundary. tests/serve/test_frames_in.py holds the two equal.
"""

from __future__ import annotations

from websockets.frames import apply_mask  # type: ignore[attr-defined]  # Frame.parse's own

_TEXT = 0x81
_BINARY = 0x82


def whole_data_frames(data: bytes, limit: int | None) -> list[tuple[bool, bytes]] | None:
    """Each frame of ``data`` as (is text, unmasked payload), when ``data`` is whole final
    masked data frames of at most ``limit`` bytes each (None: no cap); else None."""
    frames: list[tuple[bool, bytes]] = []
    end = len(data)
    at = 0
    while at < end:
        if end - at < 6:
            return None
        head, size = data[at], data[at + 1]
        if (head != _TEXT and head != _BINARY) or size < 0x80:
            return None
        size &= 0x7F
        at += 2
        if size == 126:
            size = int.from_bytes(data[at : at + 2], "big")
            at += 2
        elif size == 127:
            size = int.from_bytes(data[at : at + 8], "big")
            at += 8
        if limit is not None and size > limit:
            return None
        start = at + 4
        if start + size > end:
            return None
        frames.append((head == _TEXT, apply_mask(data[start : start + size], data[at:start])))
        at = start + size
    return frames
