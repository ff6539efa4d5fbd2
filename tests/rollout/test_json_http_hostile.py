"""``JsonHttp`` against a hostile server's replies: a reply that breaks HTTP/1.1 is an
``OSError`` (``ProtocolError``), as a failed connection is, so the ``openai:`` policy's
lean path raises ``APIConnectionError`` for it as the SDK's path does; a connection that
failed is never reused (the next request opens a fresh one); a good reply's connection is
kept for the next request unless bytes follow the reply (another reply that would be read
as the next request's) or the reply ran to the connection's close."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from gymforge.rollout.json_http import JsonHttp, ProtocolError

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
CLOSE = None  # the server closes the connection instead of replying
STALL = "stall"  # the server never replies
# a reply in a tuple: the server writes it, then closes the connection

# (the server's first reply, the client's outcome, connections opened for three requests)
CASES: dict[str, tuple[list[Any], Any, int]] = {
    "http/1.0": ([b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}"], (200, b"{}"), 2),
    "status not a number": ([b"HTTP/1.1 abc OK\r\nContent-Length: 2\r\n\r\n{}"], ProtocolError, 2),
    "no status": ([b"HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}"], ProtocolError, 2),
    "signed status": ([b"HTTP/1.1 +20 x\r\nContent-Length: 2\r\n\r\n{}"], ProtocolError, 2),
    "negative length": ([b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n{}"], ProtocolError, 2),
    "length not a number": ([b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n{}"], ProtocolError, 2),
    "non-ASCII digit length": (
        [b"HTTP/1.1 200 OK\r\nContent-Length: \xd9\xa2\r\n\r\n{}"],
        ProtocolError,
        2,
    ),
    "two lengths, the last kept": (
        [b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 2\r\n\r\n{}"],
        (200, b"{}"),
        1,
    ),
    "body cut short": ([(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}",)], EOFError, 2),
    "header cut short": ([(b"HTTP/1.1 200 OK\r\nContent-Le",)], EOFError, 2),
    "closed at once": ([CLOSE], EOFError, 2),
    "bad chunk size": (
        [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"],
        ProtocolError,
        2,
    ),
    "chunked": (
        [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"],
        (200, b"{}"),
        1,
    ),
    "header past the limit": (
        [b"HTTP/1.1 200 OK\r\nX: " + b"a" * 70_000 + b"\r\n\r\n"],
        ProtocolError,
        2,
    ),
    "connection: close": (
        [b"HTTP/1.1 200 OK\r\nconnection:   CLOSE  \r\nContent-Length: 2\r\n\r\n{}"],
        (200, b"{}"),
        2,
    ),
    "never replies": ([STALL], TimeoutError, 2),
    "no length: the body runs to the close": ([(b"HTTP/1.1 200 OK\r\n\r\n{}",)], (200, b"{}"), 2),
    "a second reply after the first": (
        [OK + b'HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n{"a":1}'],
        (200, b"{}"),
        2,
    ),
    "an interim 100 before the reply": ([b"HTTP/1.1 100 Continue\r\n\r\n" + OK], (200, b"{}"), 1),
    "two interim replies (103 with a header) before the reply": (
        [b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n" + OK],
        (200, b"{}"),
        1,
    ),
    "101 switching protocols, never asked for": (
        [b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n"],
        ProtocolError,
        2,
    ),
    "304 with a length: no body": (
        [b"HTTP/1.1 304 Not Modified\r\nContent-Length: 2\r\n\r\n"],
        (304, b""),
        1,
    ),
    "204 chunked: no body": (
        [b"HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n"],
        (204, b""),
        1,
    ),
    "chunked with trailers": (
        [
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"2\r\n{}\r\n0\r\nX-A: 1\r\nX-B: 2\r\n\r\n"
        ],
        (200, b"{}"),
        1,
    ),
    "a chunk size line past the limit": (
        [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;" + b"a" * 70_000 + b"\r\n"],
        ProtocolError,
        2,
    ),
    "a length of 5,000 digits": (
        [b"HTTP/1.1 200 OK\r\nContent-Length: " + b"1" * 5000 + b"\r\n\r\n{}"],
        ProtocolError,
        2,
    ),
    "a plain length with a sign": (
        [b"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\n{}"],
        ProtocolError,
        2,
    ),
}


async def _three_requests(script: list[Any], timeout: float) -> tuple[list[Any], int, int]:
    accepted: list[int] = []
    replies = list(script)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(1)
        try:
            while True:
                await reader.readuntil(b"\r\n\r\n")
                await reader.readexactly(2)  # the client's body: b"{}"
                step = replies.pop(0) if replies else OK
                if step is CLOSE:
                    break
                if step == STALL:
                    await asyncio.sleep(30)
                writer.write(step[0] if isinstance(step, tuple) else step)
                await writer.drain()
                if isinstance(step, tuple):
                    break
        except (OSError, EOFError, asyncio.CancelledError):
            pass
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    http = JsonHttp(f"http://127.0.0.1:{port}", {})
    out: list[Any] = []
    for _ in range(3):
        try:
            status, _, data = await http.exchange("/x", b"{}", timeout)
            out.append((status, data))
        except Exception as err:
            out.append(type(err))
    pool = len(http._loop_pool().idle)
    await http.aclose()
    server.close()
    return out, pool, len(accepted)


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hostile_reply_is_read_or_refused_as_before(case: str) -> None:
    script, first, connections = CASES[case]
    out, pool, accepted = asyncio.run(asyncio.wait_for(_three_requests(script, 0.5), 20))
    if isinstance(first, type):
        assert isinstance(out[0], type) and issubclass(out[0], first), out[0]
    else:
        assert out[0] == first
    assert out[1:] == [(200, b"{}"), (200, b"{}")]  # after it, fresh or kept, served again
    assert (pool, accepted) == (1, connections)


def test_a_protocol_error_is_an_os_error() -> None:
    """The lean path's callers catch ``OSError`` for a failed connection (the ``openai:``
    policy raises ``APIConnectionError`` for it, as its SDK path does for a reply httpx
    cannot read)."""
    assert issubclass(ProtocolError, OSError)


def test_an_idle_connection_with_bytes_waiting_is_not_reused() -> None:
    """Bytes that arrive on an idle connection (a late second reply) would be read as the
    next request's reply: the connection is dropped instead."""

    async def go() -> tuple[bool, bool]:
        http = JsonHttp("http://127.0.0.1:9", {})
        reader = asyncio.StreamReader()
        transport = _Closable()
        writer = asyncio.StreamWriter(
            transport, asyncio.Protocol(), reader, asyncio.get_running_loop()
        )  # type: ignore[arg-type]
        reader.feed_data(b"HTTP/1.1 200 OK\r\n")
        http._loop_pool().idle.append((reader, writer))
        reused = http._reuse(http._loop_pool().idle) is not None
        return reused, transport.closed

    assert asyncio.run(go()) == (False, True)


def test_a_late_final_reply_after_an_interim_one_is_its_requests_own() -> None:
    """A server may send interim (1xx) replies before the final one, as HTTP/1.1 allows and
    httpx (the SDK's path) skips. The final reply arriving a moment after the interim one
    belongs to that request: it is neither missed (the request answered with the interim
    status and no body) nor read as the reply to the next request on the connection."""

    async def go() -> list[Any]:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                for n in range(1, 4):
                    await reader.readuntil(b"\r\n\r\n")
                    await reader.readexactly(2)
                    if n == 1:
                        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                        await writer.drain()
                        await asyncio.sleep(0.05)
                    body = b'{"n":%d}' % n
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n" + body)
                    await writer.drain()
                await reader.read()
            except (OSError, EOFError):
                pass
            writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        http = JsonHttp(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", {})
        out: list[Any] = []
        for _ in range(2):
            try:
                status, _, data = await http.exchange("/x", b"{}", 2)
                out.append((status, data))
            except Exception as err:
                out.append(type(err))
        await http.aclose()
        server.close()
        return out

    out = asyncio.run(asyncio.wait_for(go(), 20))
    assert out[0] == (200, b'{"n":1}')  # request 1's own reply, not the interim one
    assert out[1] != (200, b'{"n":1}')  # never request 1's reply read as request 2's
    assert out[1] == (200, b'{"n":2}')


class _Closable(asyncio.Transport):
    closed = False

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed
