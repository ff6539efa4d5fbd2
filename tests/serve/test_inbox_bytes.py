"""The inbox's budget (``max_message_bytes`` of messages waiting) counts a text message's
UTF-8 bytes, as its name says, not its characters: astral text (4 bytes a character) once
queued up to four times the budget before reading paused."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from gymforge.serve.ws_fast import Inbox, SessionProtocol
from tests.serve.test_fast_paths_red12_serve import _Proto

TEXT = "\U0001f600" * 30  # 30 characters, 120 bytes of UTF-8


def _inbox(budget: int) -> tuple[Inbox, _Proto]:
    proto = _Proto(asyncio.new_event_loop())
    return Inbox(proto, budget), proto  # type: ignore[arg-type]  # the stand-in above


def test_a_delivered_text_frame_counts_its_bytes() -> None:
    inbox, proto = _inbox(100)
    connection = SimpleNamespace(close_sent=False, curr_msg_data_type="text", inbox=inbox)
    SessionProtocol._deliver(connection, TEXT.encode())  # type: ignore[arg-type]
    assert inbox._bytes == 120 and proto.read_paused
    proto.loop.close()


def test_an_event_put_by_uvicorn_counts_its_bytes() -> None:
    inbox, proto = _inbox(100)
    inbox.put_nowait({"type": "websocket.receive", "text": TEXT})
    assert inbox._bytes == 120 and proto.read_paused
    inbox.put_nowait({"type": "websocket.receive", "text": "ascii"})
    inbox.put_nowait({"type": "websocket.receive", "bytes": b"\xff" * 3})
    assert inbox._bytes == 128
    proto.loop.close()


def test_within_the_budget_reading_goes_on() -> None:
    inbox, proto = _inbox(120)
    inbox.put_nowait({"type": "websocket.receive", "text": TEXT})
    assert inbox._bytes == 120 and not proto.read_paused
    proto.loop.close()
