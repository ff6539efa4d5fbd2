"""A tool-calling LangGraph agent, run by gymforge as a harness (``harness:`` policy).

A two-node LangGraph graph owns the loop (model, then tools while the model calls them): it
asks the model (``ChatOpenAI`` pointed at
the episode's proxy URL, so every request's exact tokens are recorded) and calls the
episode's tools over MCP (the SDK's client; each tool becomes a LangChain tool whose schema
is the server's). gymforge records each tool call as a step and the agent's last message as
the reply, so the episode is scored, replayed and exported like any other.

    gymforge eval ledger --policy harness:examples.langgraph_agent.agent:run \\
        --base-url http://127.0.0.1:8000/v1 -n 20 --out runs/langgraph
"""

from __future__ import annotations

from typing import Any

from langchain_core.tools import StructuredTool
from langchain_openai import ChatOpenAI
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from gymforge.serve.harness.policy import HarnessContext

RECURSION_LIMIT = 40  # LangGraph super-steps: about 20 model turns


def as_langchain_tool(client: Client, tool: Any) -> StructuredTool:
    """One MCP tool as a LangChain tool that calls it over the episode's MCP session."""

    async def call(**arguments: Any) -> str:
        result = await client.call_tool(tool.name, arguments)
        return "".join(getattr(part, "text", "") for part in result.content)

    return StructuredTool.from_function(
        coroutine=call,
        name=tool.name,
        description=tool.description or tool.name,
        args_schema=tool.input_schema,
    )


async def run(ctx: HarnessContext) -> str:
    """Play one episode; the final message is the agent's answer."""
    http = create_mcp_http_client(headers=ctx.mcp_headers)
    async with http, Client(streamable_http_client(ctx.mcp_url, http_client=http)) as client:
        tools = [as_langchain_tool(client, t) for t in (await client.list_tools()).tools]
        model = ChatOpenAI(
            model=ctx.model, base_url=ctx.base_url, api_key=ctx.api_key, max_retries=0
        ).bind_tools(tools)

        async def call_model(state: MessagesState) -> dict[str, Any]:
            return {"messages": [await model.ainvoke(state["messages"])]}

        graph = StateGraph(MessagesState)
        graph.add_node("model", call_model)
        graph.add_node("tools", ToolNode(tools))
        graph.add_edge(START, "model")
        graph.add_conditional_edges("model", tools_condition)  # tools, or the end
        graph.add_edge("tools", "model")
        agent = graph.compile()
        state = await agent.ainvoke(
            {"messages": ctx.messages}, {"recursion_limit": RECURSION_LIMIT}
        )
    return str(state["messages"][-1].content or "")
