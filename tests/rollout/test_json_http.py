"""The lean keep-alive JSON client behind the vllm: policy's /tokenize requests."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from gymforge.rollout.json_http import JsonHttp


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
            assert len(http._pool()) == 1  # one connection, reused
            assert (await http.post("/c", b"{}", 5))[0] == 503
            assert len(http._pool()) == 0  # the server closed it
            with pytest.raises((OSError, EOFError)):
                await http.post("/d", b"{}", 5)
            assert await http.post("/a", b"{}", 5) == (200, b'{"tokens": [1, 2]}')  # fresh
            await http.aclose()
        assert seen[0] == ("/v/a", b'{"q": 1}', "Bearer k")

    asyncio.run(asyncio.wait_for(go(), 30))
