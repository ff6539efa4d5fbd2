"""The LangGraph harness on ``ledger`` with no model server: a local test server stands in
for the model (it calls the first offered tool twice, then answers), ``gymforge eval`` runs
the agent as ``harness:`` policy, and the report's numbers come from its trajectories.

    .venv/bin/python examples/langgraph_agent/demo.py [--env support-desk] [--out DIR]

With a real model, point ``--base-url`` at it instead:

    gymforge eval ledger --policy harness:examples/langgraph_agent/agent.py:run \\
        --base-url http://127.0.0.1:8000/v1 -n 20 --out runs/langgraph
"""

from __future__ import annotations

import argparse
from typing import Any

from gymforge.cli import app
from gymforge.testing.openai_server import OpenAITestServer
from gymforge.testing.openai_server.fake import ServedReply, ServedToolCall

AGENT = "examples/langgraph_agent/agent.py:run"


def first_tool_then_answer(request: dict[str, Any]) -> ServedReply:
    turns = sum(m.get("role") == "assistant" for m in request["messages"])
    tools = request.get("tools") or []
    if turns < 2 and tools:
        return ServedReply(tool_calls=(ServedToolCall(tools[0]["function"]["name"], {}),))
    return ServedReply(content="Done: nothing more I can do.")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--env", default="ledger")
    ap.add_argument("-n", type=int, default=4)
    ap.add_argument("--out", default="runs/langgraph-demo")
    args = ap.parse_args()
    with OpenAITestServer(first_tool_then_answer) as server:
        argv = ["eval", args.env, "--policy", f"harness:{AGENT}", "--base-url", server.base_url]
        app([*argv, "-n", str(args.n), "--out", args.out, "--overwrite"], standalone_mode=False)


if __name__ == "__main__":
    main()
