"""Attack: through a harness, make one request fail, then fall over later, and take the
episode out of the count.

A harness's crash is infrastructure (retried, never scored) when the proxy answered it with
the upstream's failure, unless the proxy judges that failure the model's (``proxy.crash``).
The proxy kept the *last* failure an episode ever saw, and judged only its *last* request:

- a harness that, having acted, sends one request the upstream fails on (what it writes
  is its own), then a request that is answered (its history without that text), and then
  falls over by itself, was judged on the answered request: none, so its crash was an
  infrastructure error;
- a harness that, after that failure, falls over while its next request is in flight was
  judged on a request with no status: none either.

- a harness that hangs up on a streamed request before its answer comes: the proxy's write
  to the closed connection raised a client error, answered (to no one) as the upstream
  unreachable, a 502 marking the episode's server failed; its crash after that was judged
  on that request, answered when the proxy sent it once more: infrastructure.

Success of the attack is the episode missing from the summary (or retried: a fresh roll):
a policy failing a task takes it out of the count whenever it likes. The defence: the
upstream's failure the proxy keeps is the one of the episode's current request; a request
answered (or sent anew) forgets the one before, so a crash after it is the harness's own,
counted; a request the harness hung up on is one it gave up on, not one the upstream
failed.

Turned around: an outage that failed a streamed request with ``stream_options`` and ended
before the proxy sent it once more had that resend (without ``stream``) refused for its
streaming options, a 400, read as the request failing again: the harness's crash on an
outage was counted as the policy's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

import openai
import test_policy_server_fails_on_agent_text as failing
from aiohttp import web
from moderation import TRIGGER
from test_harness_upstream_fails_on_agent_text import assert_counted

from gymforge.serve.harness.context import HarnessContext
from tests.serve.harness_agents import run_harness

HERE = "test_harness_stale_upstream_failure"


def respond(request: dict[str, Any]) -> str:
    return "an answer"


async def _acted_then_failed(ctx: HarnessContext) -> tuple[openai.AsyncOpenAI, list[Any]]:
    """One turn answered, then one request holding what the upstream fails on (its
    text is the harness's own)."""
    model = openai.AsyncOpenAI(base_url=ctx.base_url, api_key=ctx.api_key, max_retries=0)
    messages: list[Any] = list(ctx.messages)
    r = await model.chat.completions.create(model=ctx.model, messages=messages)
    messages.append(r.choices[0].message.model_dump(exclude_none=True))
    with contextlib.suppress(openai.InternalServerError):  # what it came for
        await model.chat.completions.create(
            model=ctx.model, messages=[{"role": "user", "content": TRIGGER}]
        )  # a conversation of its own: passed through, failed at once
    return model, messages


async def answered_then_crash(ctx: HarnessContext) -> str:
    """Fails one request, has the next one answered, then falls over by itself."""
    model, messages = await _acted_then_failed(ctx)
    await model.chat.completions.create(model=ctx.model, messages=messages)
    await model.close()
    raise RuntimeError("fell over by itself")


async def in_flight_then_crash(ctx: HarnessContext) -> str:
    """Fails one request, then falls over while its next request is in flight."""
    model, messages = await _acted_then_failed(ctx)
    pending = asyncio.ensure_future(
        model.chat.completions.create(
            model=ctx.model, messages=[*messages, {"role": "user", "content": "slow"}]
        )
    )
    await asyncio.sleep(0.1)  # the request reached the proxy (the upstream answers in 0.5 s)
    pending.cancel()
    await model.close()
    raise RuntimeError("fell over while waiting")


def test_a_crash_after_an_answered_request_is_counted(tmp_path: Path) -> None:
    with failing.FailsOnTrigger(respond) as upstream:
        result = run_harness(
            f"harness:{HERE}:answered_then_crash", upstream, tmp_path, max_retries=1
        )
    assert_counted(tmp_path, result)


def test_a_crash_with_a_request_in_flight_after_a_failure_is_counted(tmp_path: Path) -> None:
    with failing.FailsOnTrigger(respond) as upstream:
        upstream.latency = lambda body: 0.5 if "slow" in json.dumps(body) else 0.0
        result = run_harness(
            f"harness:{HERE}:in_flight_then_crash", upstream, tmp_path, max_retries=1
        )
    assert_counted(tmp_path, result)


async def hang_up_then_crash(ctx: HarnessContext) -> str:
    """Has one turn answered, then asks a streamed answer and hangs up before it comes
    (its own client's timeout); falls over."""
    model = openai.AsyncOpenAI(base_url=ctx.base_url, api_key=ctx.api_key, max_retries=0)
    messages: list[Any] = list(ctx.messages)
    r = await model.chat.completions.create(model=ctx.model, messages=messages)
    messages.append(r.choices[0].message.model_dump(exclude_none=True))
    messages.append({"role": "user", "content": "slow"})
    with contextlib.suppress(openai.APITimeoutError):
        await model.chat.completions.create(
            model=ctx.model, messages=messages, stream=True, timeout=0.1
        )
    await model.close()
    await asyncio.sleep(0.5)  # the proxy wrote the answer to a closed connection
    raise RuntimeError("fell over")


def test_a_harness_hanging_up_is_not_the_upstream_failing(tmp_path: Path) -> None:
    with failing.FailsOnTrigger(respond) as upstream:
        upstream.latency = lambda body: 0.3 if "slow" in json.dumps(body) else 0.0
        result = run_harness(
            f"harness:{HERE}:hang_up_then_crash", upstream, tmp_path, max_retries=1
        )
    assert_counted(tmp_path, result)


class StrictStreamOptions(failing.FailsOnTrigger):
    """Refuses ``stream_options`` without ``stream``, as vLLM and OpenAI do (a 400); fails
    the first streamed request (an outage that then ends)."""

    outage = 1

    async def _handle(self, request: web.Request, required: str, build: Any) -> Any:
        body = json.loads(await request.read())
        if body.get("stream_options") and not body.get("stream"):
            error = {"message": "Stream options can only be defined when stream=True."}
            return web.json_response({"error": error}, status=400)
        if body.get("stream") and self.outage:
            self.outage -= 1
            return web.json_response({"error": {"message": "overloaded"}}, status=503)
        return await super()._handle(request, required, build)


async def streams_with_usage(ctx: HarnessContext) -> str:
    """Streams its answers with usage (``stream_options``); falls over when one fails."""
    model = openai.AsyncOpenAI(base_url=ctx.base_url, api_key=ctx.api_key, max_retries=0)
    messages: list[Any] = list(ctx.messages)
    r = await model.chat.completions.create(model=ctx.model, messages=messages)
    assert r.choices[0].message.content
    stream = await model.chat.completions.create(  # a new conversation: passed through
        model=ctx.model,
        messages=[{"role": "user", "content": "go on"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    await model.close()
    return text


def test_an_outage_of_a_streamed_request_stays_infrastructure(tmp_path: Path) -> None:
    # the upstream fails the streamed request once (an outage), then answers everything: the
    # proxy's resend of that request must not be refused for its streaming options
    with StrictStreamOptions(respond) as upstream:
        result = run_harness(
            f"harness:{HERE}:streams_with_usage", upstream, tmp_path, max_retries=1
        )
    assert not result.errors, result.errors
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["infra_retries"] == 1, summary  # the outage: retried, never counted
    assert "harness_crashed" not in (summary.get("failure_reasons") or {}), summary
