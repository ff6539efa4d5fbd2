"""The lean keep-alive JSON client behind the vllm: policy's /tokenize requests."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from gymforge.rollout.json_http import JsonHttp, ProtocolError


async def serve(app: web.Application) -> AsyncIterator[str]:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def read_request(reader: asyncio.StreamReader) -> bool:
    """One request read (head and ``Content-Length`` body); False once the client closed."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return False
    size = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
    await reader.readexactly(size)
    return True


def test_lengths_chunks_keep_alive_and_errors() -> None:
    seen: list[tuple[str, bytes, str | None]] = []

    async def plain(request: web.Request) -> web.StreamResponse:
        seen.append((request.path, await request.read(), request.headers.get("Authorization")))
        return web.json_response({"tokens": [1, 2]})

    async def chunked(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse()
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        for part in (b'{"tok', b'ens": ', b"[3]}"):
            await resp.write(part)
        await resp.write_eof()
        return resp

    async def closing(request: web.Request) -> web.StreamResponse:
        return web.json_response({"x": 1}, status=503, headers={"Connection": "close"})

    async def cut(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Length": "100"})
        await resp.prepare(request)
        await resp.write(b'{"par')
        assert request.transport is not None
        request.transport.close()
        return resp

    app = web.Application()
    for path, handler in (("/v/a", plain), ("/v/b", chunked), ("/v/c", closing), ("/v/d", cut)):
        app.router.add_post(path, handler)

    async def go() -> None:
        async for root in serve(app):
            http = JsonHttp(root + "/v", {"Authorization": "Bearer k"})
            assert await http.post("/a", b'{"q": 1}', 5) == (200, b'{"tokens": [1, 2]}')
            assert await http.post("/b", b"{}", 5) == (200, b'{"tokens": [3]}')
            assert len(http._loop_pool().idle) == 1  # one connection, reused
            assert (await http.post("/c", b"{}", 5))[0] == 503
            assert len(http._loop_pool().idle) == 0  # the server closed it
            with pytest.raises((OSError, EOFError)):
                await http.post("/d", b"{}", 5)
            assert await http.post("/a", b"{}", 5) == (200, b'{"tokens": [1, 2]}')  # fresh
            await http.aclose()
        assert seen[0] == ("/v/a", b'{"q": 1}', "Bearer k")

    asyncio.run(asyncio.wait_for(go(), 30))


def test_each_event_loop_keeps_its_own_connections() -> None:
    """A connection opened on one loop is never used on another (the pool is per loop, and
    the last loop's pool kept at hand is not another's)."""
    opened: list[int] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        opened.append(1)
        while await read_request(reader):
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
        writer.close()

    def serve_forever(port: list[int], ready: threading.Event, stop: threading.Event) -> None:
        async def main() -> None:
            server = await asyncio.start_server(handle, "127.0.0.1", 0)
            port.append(server.sockets[0].getsockname()[1])
            ready.set()
            while not stop.is_set():
                await asyncio.sleep(0.01)
            server.close()

        asyncio.run(main())

    port: list[int] = []
    ready, stop = threading.Event(), threading.Event()
    thread = threading.Thread(target=serve_forever, args=(port, ready, stop), daemon=True)
    thread.start()
    assert ready.wait(10)
    http = JsonHttp(f"http://127.0.0.1:{port[0]}", {})

    async def twice() -> int:
        assert await http.post("/x", b"{}", 5) == (200, b"{}")
        assert await http.post("/x", b"{}", 5) == (200, b"{}")
        return len(http._loop_pool().idle)

    try:
        assert asyncio.run(twice()) == 1  # left open: that loop is gone after this
        assert asyncio.run(twice()) == 1
        assert len(opened) == 2  # one connection per loop, each reused once
    finally:
        stop.set()
        thread.join(10)


def test_a_response_without_a_status_code_closes_its_connection() -> None:
    """A status line whose code is not a number raises ``ProtocolError`` (an ``OSError``),
    and the connection is dropped, never kept for the next request."""
    served: list[int] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        served.append(1)
        head = await reader.readuntil(b"\r\n\r\n")
        size = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        await reader.readexactly(size)
        status = b"HTTP/1.1 OK\r\n" if len(served) == 1 else b"HTTP/1.1 200 OK\r\n"
        writer.write(status + b"Content-Length: 2\r\n\r\n{}")
        await writer.drain()
        await reader.read()  # until the client closes
        writer.close()

    async def go() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        http = JsonHttp(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", {})
        with pytest.raises(ProtocolError):
            await http.post("/x", b"{}", 5)
        assert len(http._loop_pool().idle) == 0
        assert await http.post("/x", b"{}", 5) == (200, b"{}")  # a fresh connection
        assert len(served) == 2
        await http.aclose()
        server.close()

    asyncio.run(asyncio.wait_for(go(), 30))


@pytest.mark.parametrize("cap", [1, 3])
def test_open_connections_stay_within_the_cap(cap: int) -> None:
    """``max_connections`` bounds the connections open to the server at once, as the SDK's
    connection limit does on its path: 20 requests at once, answered slowly, open at most
    ``cap``; each waits for a free one, and all are answered."""
    open_now: list[int] = [0]
    most: list[int] = [0]

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        open_now[0] += 1
        most[0] = max(most[0], open_now[0])
        try:
            while await read_request(reader):
                await asyncio.sleep(0.01)
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
                await writer.drain()
        finally:
            open_now[0] -= 1
            writer.close()

    async def go() -> list[tuple[int, bytes]]:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        root = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        http = JsonHttp(root, {}, max_connections=cap)
        try:
            return await asyncio.gather(*(http.post("/x", b"{}", 10) for _ in range(20)))
        finally:
            await http.aclose()
            server.close()

    answers = asyncio.run(asyncio.wait_for(go(), 60))
    assert answers == [(200, b"{}")] * 20
    assert 1 <= most[0] <= cap


def test_a_cap_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="max_connections"):
        JsonHttp("http://127.0.0.1:9", {}, max_connections=0)


@pytest.mark.parametrize("root", ["http:127.0.0.1:9", "http:///v1", "127.0.0.1:9", "ftp://h:9"])
def test_a_root_naming_no_http_server_is_refused(root: str) -> None:
    """Never a connection to a default host in its place (it was 127.0.0.1:80)."""
    with pytest.raises(ValueError, match="http"):
        JsonHttp(root, {})


def test_a_loop_is_never_handed_the_pool_another_thread_just_cached() -> None:
    """``_loop_pool`` kept the last loop's pool at hand and read that cache twice: checked
    it named the running loop, then returned its pool. A thread on another loop that
    replaced the cache in between handed this loop that loop's pool, whose slots (an
    ``asyncio.Semaphore``) are bound to the other loop: "is bound to a different event
    loop" (seen once in a full run of ``test_two_event_loops_in_two_threads_share_one_client``).
    Here the cache's check itself replaces it, as that thread would at that moment."""
    import weakref

    http = JsonHttp("http://127.0.0.1:9", {}, max_connections=1)
    other_pool = object()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        own = http._loop_pool()
        other_loop = asyncio.new_event_loop()
        try:
            other = (weakref.ref(other_loop), other_pool)

            def ref() -> asyncio.AbstractEventLoop:
                http._last = other  # type: ignore[assignment]  # the other thread, meanwhile
                return loop

            http._last = (ref, own)  # type: ignore[assignment]
            assert http._loop_pool() is own, "handed the other loop's pool"
        finally:
            other_loop.close()

    asyncio.run(main())
