"""The harness of ``test_proxy_other_model.py``: it asks its episode's model for the first
turn, then continues the same conversation with another model the upstream serves (a LoRA
adapter, a teacher, an alias), through the same episode URL."""

from __future__ import annotations

import json
from typing import Any

import openai
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from gymforge.serve.harness.policy import HarnessContext

OTHER = "teacher-model"


async def agent(ctx: HarnessContext) -> str:
    model = openai.AsyncOpenAI(base_url=ctx.base_url, api_key=ctx.api_key, max_retries=0)
    http = create_mcp_http_client(headers=ctx.mcp_headers)
    async with http, Client(streamable_http_client(ctx.mcp_url, http_client=http)) as mcp:
        listed = await mcp.list_tools()
        tools: Any = [
            {
                "type": "function",
                "function": {"name": t.name, "parameters": t.input_schema},
            }
            for t in listed.tools
        ]
        messages: list[Any] = list(ctx.messages)
        r = await model.chat.completions.create(model=ctx.model, messages=messages, tools=tools)
        message = r.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls or []:
            fn = call.function  # type: ignore[union-attr]
            result = await mcp.call_tool(fn.name, json.loads(fn.arguments or "{}"))
            text = "".join(getattr(c, "text", "") for c in result.content)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
        r = await model.chat.completions.create(model=OTHER, messages=messages, tools=tools)
    await model.close()
    return r.choices[0].message.content or ""
