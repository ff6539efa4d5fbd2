"""A streamed reply the proxy passes through is in the episode's transcript before the
harness has all of it. The proxy recorded the turn only once the upstream's stream had
ended, after forwarding every line: a harness could act on the reply first (the ``openai``
SDK stops reading at ``[DONE]``, and a harness that asks for token ids and logprobs itself
gets the upstream's lines as they are, ``[DONE]`` and its blank line included). Its next
request then found no turn to continue (a pass-through instead of token-in, and two turns
recorded out of order), and a tool call it made at once was matched to no model turn by the
runner (``_turn`` reads the transcript when the call arrives): the turn went to the next
step, or, after the final reply, was never recorded. Here the upstream holds its stream
open after ``[DONE]`` until the test has looked."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from aiohttp import web

from gymforge.serve.loop_thread import LoopThread, start_site
from gymforge.serve.proxy import sse
from gymforge.serve.proxy.server import ProxyConfig, ProxyServer

TOKEN = "proxy-stream-record-token"
REPLY: dict[str, Any] = {
    "id": "chatcmpl-held",
    "created": 0,
    "model": "m",
    "prompt_token_ids": [1, 2, 3],
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Hello there."},
            "token_ids": [7, 8],
            "finish_reason": "stop",
        }
    ],
}


class HeldUpstream:
    """A chat server that streams ``REPLY`` and ``[DONE]``, then holds the stream open
    until ``release`` is set (an upstream whose end of body comes late)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.port = 0
        self._loop = LoopThread("held-upstream")
        self._runner: web.AppRunner | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def _serve(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None)
        self.port = await start_site(self._runner, "127.0.0.1", 0)

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        await request.read()
        out = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await out.prepare(request)
        for chunk in sse.stream_chunks(REPLY):
            await out.write(sse.encode(chunk))
        await out.write(sse.DONE)
        await asyncio.to_thread(self.release.wait, 60)  # bounded: the test sets it
        with contextlib.suppress(ConnectionError):  # the proxy may have let go of it
            await out.write_eof()
        return out

    async def _shutdown(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def __enter__(self) -> HeldUpstream:
        self._loop.start(self._serve)
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self._loop.stop(self._shutdown)


@pytest.fixture
def upstream() -> Iterator[HeldUpstream]:
    with HeldUpstream() as server:
        yield server


def test_a_streamed_turn_is_recorded_before_the_harness_has_all_of_it(
    upstream: HeldUpstream,
) -> None:
    with ProxyServer(ProxyConfig(upstream=upstream.base_url, token=TOKEN)) as proxy:
        base_url = proxy.open_episode("held")
        client = openai.OpenAI(base_url=base_url, api_key=TOKEN, max_retries=0, timeout=60)
        try:
            stream = client.chat.completions.create(  # token ids asked: passed on as sent
                model="m",
                messages=[{"role": "user", "content": "Hi."}],
                stream=True,
                logprobs=True,
                extra_body={"return_token_ids": True},
            )
            text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
            assert text == "Hello there."  # the whole reply, as a harness reads it
            turns = proxy.transcript("held").turns  # at once: the upstream is still open
            assert [t.completion_token_ids for t in turns] == [[7, 8]]
            assert turns[0].prompt_token_ids == [1, 2, 3] and turns[0].finish_reason == "stop"
        finally:
            upstream.release.set()
            client.close()


def test_done_ends_its_event_when_the_proxy_rewrites_the_stream(upstream: HeldUpstream) -> None:
    """A harness that asks for no token ids gets the stream rewritten (the ids and logprobs
    the proxy added taken out): the upstream's ``data: [DONE]`` line was passed on without
    the blank line after it, so an event-stream reader that dispatches an event only at its
    blank line (as the format says) never saw ``[DONE]``."""
    upstream.release.set()  # the upstream ends its stream after [DONE]
    with ProxyServer(ProxyConfig(upstream=upstream.base_url, token=TOKEN)) as proxy:
        base_url = proxy.open_episode("rewritten")
        body = {"model": "m", "messages": [{"role": "user", "content": "Hi."}], "stream": True}
        headers = {"Authorization": f"Bearer {TOKEN}"}
        r = httpx.post(base_url + "/chat/completions", json=body, headers=headers, timeout=60)
        assert r.status_code == 200
        events = r.content.split(b"\n\n")
        assert events[-1] == b"", r.content[-80:]  # every event ended by its blank line
        assert events[-2] == b"data: [DONE]"
        assert all(e.startswith(b"data: {") for e in events[:-2])
        assert b'"token_ids"' not in r.content  # rewritten: what the proxy added taken out
