"""The local OpenAI-compatible test server itself, seen through the openai SDK."""

from __future__ import annotations

import asyncio

import openai
import pytest
from openai_helpers import arun

from gymforge.core.policy import EpisodeContext
from gymforge.core.types import Message, Observation, Reply
from gymforge.rollout.openai_policy import OpenAIPolicyFactory
from gymforge.testing import OpenAITestServer


def test_models_and_error_shapes(server: OpenAITestServer) -> None:
    async def go() -> None:
        async with openai.AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0) as c:
            models = await c.models.list()
            assert [m.id for m in models.data] == ["gymforge-test"]
            server.inject("429")
            with pytest.raises(openai.RateLimitError, match="injected 429"):
                await c.chat.completions.create(model="m", messages=[])
            server.inject("context")
            with pytest.raises(openai.BadRequestError, match="maximum context length"):
                await c.chat.completions.create(model="m", messages=[])
            for fault in ("drop", "reset"):
                server.inject(fault)
                with pytest.raises(openai.APIConnectionError):
                    await c.chat.completions.create(model="m", messages=[])

    arun(go())
    with pytest.raises(ValueError, match="unknown fault"):
        server.inject("teapot")


def test_many_concurrent_conversations_share_one_client(server: OpenAITestServer) -> None:
    server.latency = 0.2
    factory = OpenAIPolicyFactory("m", base_url=server.base_url)
    obs = Observation(messages=(Message(role="user", content="hello"),))

    async def conversation(i: int) -> list[Reply]:
        policy = factory()
        await policy.start(EpisodeContext("t", i, sampling_seed=i))
        return [(await policy.act(obs)).action for _ in range(2)]  # type: ignore[misc]

    async def go() -> list[list[Reply]]:
        try:
            return await asyncio.gather(*(conversation(i) for i in range(300)))
        finally:
            await factory.aclose()

    results = arun(go())
    assert all(r == [Reply(text="echo: hello")] * 2 for r in results)
    assert server.served["ok"] == 600
    assert sorted(r["seed"] for r in server.requests) == sorted(list(range(300)) * 2)


def test_cache_keeps_answers_up_to_its_limit() -> None:
    """A benchmark sizes the cache to every request it sends (``--cache-limit``), so every
    client it compares is answered from the cache alike; past the limit an answer is
    computed each time, and stays the same answer."""

    async def go(server: OpenAITestServer, prompts: list[str]) -> list[str]:
        async with openai.AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0) as c:
            out = []
            for text in prompts:
                reply = await c.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": text}]
                )
                out.append(reply.choices[0].message.content or "")
            return out

    prompts = ["one", "two", "three", "one", "three"]
    with OpenAITestServer(cache=True, cache_limit=2, record=False) as server:
        answers = arun(go(server, prompts))
        assert server.cache is not None and len(server.cache) == 2
    with OpenAITestServer(cache=True, record=False) as roomy:  # the default: 4,096
        assert arun(go(roomy, prompts)) == answers
        assert roomy.cache is not None and len(roomy.cache) == 3
    assert answers[0] == answers[3] and answers[2] == answers[4]
