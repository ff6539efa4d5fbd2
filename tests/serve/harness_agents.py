"""Harnesses for the harness-policy tests: small agents written the way users write them,
with the real ``openai`` SDK for the model and the MCP SDK's client for the tools."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import openai
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from gymforge.rollout.executors import executor_for
from gymforge.rollout.plan import prepare
from gymforge.rollout.runner import RunResult, run_sync
from gymforge.rollout.spec import RunSpec
from gymforge.serve.harness.policy import HarnessContext
from gymforge.testing.openai_server import OpenAITestServer

AGENTS = "tests.serve.harness_agents"


def run_harness(
    policy: str, upstream: OpenAITestServer, out: Path, n: int = 1, **spec: Any
) -> RunResult:
    """``n`` ledger episodes (seed 11) of ``policy`` against ``upstream``, as ``gymforge
    run`` plays them, into ``out``."""
    run = RunSpec(env="ledger", policy=policy, n=n, seed=11, out=out, **spec)
    ready = prepare(run, policy_options={"base_url": upstream.base_url})
    try:
        return run_sync(ready.spec, executor_for(ready.spec, ready.handle, ready.source))
    finally:
        if ready.source.close is not None:
            asyncio.run(ready.source.close())


async def tool_agent(ctx: HarnessContext, max_turns: int = 8) -> str:
    """A plain tool-calling loop: ask the model, run its tool calls over MCP, repeat."""
    model = openai.AsyncOpenAI(base_url=ctx.base_url, api_key=ctx.api_key, max_retries=0)
    http = create_mcp_http_client(headers=ctx.mcp_headers)
    async with http, Client(streamable_http_client(ctx.mcp_url, http_client=http)) as mcp:
        listed = await mcp.list_tools()
        tools = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description or "",
                    "parameters": t.input_schema,
                },
            }
            for t in listed.tools
        ]
        messages: list[dict[str, Any]] = list(ctx.messages)
        for _ in range(max_turns):
            r = await model.chat.completions.create(
                model=ctx.model,
                messages=messages,  # type: ignore[arg-type]
                tools=tools,  # type: ignore[arg-type]
            )
            msg = r.choices[0].message
            messages.append(msg.model_dump(exclude_none=True))
            if not msg.tool_calls:
                await model.close()
                return msg.content or ""
            for call in msg.tool_calls:
                fn = call.function  # type: ignore[union-attr]
                result = await mcp.call_tool(fn.name, json.loads(fn.arguments or "{}"))
                text = "".join(getattr(c, "text", "") for c in result.content)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
    await model.close()
    return "gave up"


def crashing_agent(ctx: HarnessContext) -> str:
    """A sync harness that fails before doing anything."""
    raise RuntimeError("the harness fell over")


async def crash_after_one_call(ctx: HarnessContext) -> str:
    """Calls one tool, then falls over mid-episode."""
    http = create_mcp_http_client(headers=ctx.mcp_headers)
    async with http, Client(streamable_http_client(ctx.mcp_url, http_client=http)) as mcp:
        await mcp.call_tool("search_customers", {"name": "a"})
    raise RuntimeError("lost the plot mid-episode")


async def sleeper(ctx: HarnessContext) -> str:
    """Never answers."""
    import asyncio

    await asyncio.sleep(3600)
    return "too late"


async def rewriting_agent(ctx: HarnessContext) -> str:
    """Calls a tool, then rewrites its history (a summary in place of the transcript) before
    asking the model again: the second request does not extend the first."""
    model = openai.AsyncOpenAI(base_url=ctx.base_url, api_key=ctx.api_key, max_retries=0)
    http = create_mcp_http_client(headers=ctx.mcp_headers)
    async with http, Client(streamable_http_client(ctx.mcp_url, http_client=http)) as mcp:
        messages: list[dict[str, Any]] = list(ctx.messages)
        r = await model.chat.completions.create(model=ctx.model, messages=messages)  # type: ignore[arg-type]
        call = (r.choices[0].message.tool_calls or [None])[0]
        found = ""
        if call is not None:
            fn = call.function  # type: ignore[union-attr]
            result = await mcp.call_tool(fn.name, json.loads(fn.arguments or "{}"))
            found = "".join(getattr(c, "text", "") for c in result.content)
        summary = [messages[0], {"role": "user", "content": f"So far: {found[:200]}. Finish."}]
        r = await model.chat.completions.create(model=ctx.model, messages=summary)  # type: ignore[arg-type]
    await model.close()
    return r.choices[0].message.content or ""


async def crash_when_told(ctx: HarnessContext) -> str:
    """Asks the model, acts on its tool call, asks again, and falls over when the model's
    reply says so: a model that makes its own harness crash once it has acted."""
    model = openai.AsyncOpenAI(base_url=ctx.base_url, api_key=ctx.api_key, max_retries=0)
    http = create_mcp_http_client(headers=ctx.mcp_headers)
    async with http, Client(streamable_http_client(ctx.mcp_url, http_client=http)) as mcp:
        messages: list[dict[str, Any]] = list(ctx.messages)
        r = await model.chat.completions.create(model=ctx.model, messages=messages)  # type: ignore[arg-type]
        call = (r.choices[0].message.tool_calls or [None])[0]
        if call is not None:
            fn = call.function  # type: ignore[union-attr]
            await mcp.call_tool(fn.name, json.loads(fn.arguments or "{}"))
        messages += [
            {"role": "assistant", "content": "searched"},
            {"role": "user", "content": "go"},
        ]
        r = await model.chat.completions.create(model=ctx.model, messages=messages)  # type: ignore[arg-type]
    await model.close()
    if "CRASH" in (r.choices[0].message.content or ""):
        raise RuntimeError("the model's reply broke the harness")
    return r.choices[0].message.content or ""
