"""A policy server that answers but never finishes: its headers and then one byte of body a
tick at a time, or a chunked body that never ends. The lean request path sets no timer of
its own (``call_with_retries`` bounds each attempt), so success would be a run that hangs
forever on one request; each attempt must end at ``call_timeout`` and the call fail after
``max_attempts``."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from gymforge.core.policy import episode_context
from gymforge.core.types import Message, Observation
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout.openai_policy import OpenAIPolicyFactory, Retry
from gymforge.rollout.server import PolicyServerError

OBS = Observation(messages=(Message(role="user", content="hi"),))
Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _drip(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await reader.readuntil(b"\r\n\r\n")
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 99\r\n\r\n")
    for _ in range(600):
        writer.write(b" ")
        await writer.drain()
        await asyncio.sleep(0.05)


async def _endless_chunks(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await reader.readuntil(b"\r\n\r\n")
    writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    for _ in range(600):
        writer.write(b"1\r\n \r\n")
        await writer.drain()
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("handler", [_drip, _endless_chunks], ids=["drip", "endless-chunks"])
def test_a_never_ending_reply_is_cut_at_the_call_timeout(handler: Handler) -> None:
    async def go() -> None:
        server = await asyncio.start_server(handler, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        retry = Retry(max_attempts=2, base_delay=0.01, max_delay=0.02, call_timeout=0.5)
        factory = OpenAIPolicyFactory(
            "m", base_url=f"http://127.0.0.1:{port}/v1", api_key="k", retry=retry,
            request_path="lean",
        )  # fmt: skip
        policy = factory()
        try:
            async with asyncio.timeout(60):  # the test's own bound: a hang fails, not stalls
                await policy.start(episode_context(None, LedgerEnv(), "t/v1/d1/s1", 3))
                with pytest.raises(PolicyServerError, match=r"failed 2 attempts.*0\.5 s"):
                    await policy.act(OBS)
        finally:
            await factory.aclose()
            server.close()

    asyncio.run(go())  # ~1 s: two attempts of 0.5 s
