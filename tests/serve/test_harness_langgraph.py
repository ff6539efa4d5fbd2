"""The LangGraph example as a harness: ``gymforge eval`` runs it on ``ledger`` and
``support-desk`` against the test server, and its episodes are ordinary trajectories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gymforge.testing.openai_server import OpenAITestServer
from gymforge.testing.openai_server.fake import ServedReply, ServedToolCall
from gymforge.trajectory.export import export
from gymforge.trajectory.io import read_episodes
from tests.evaluate.eval_helpers import run_cli

pytest.importorskip("langgraph", reason="the LangGraph example needs the [harness] extra")

AGENT = "examples/langgraph_agent/agent.py:run"


def first_tool_then_answer(request: dict[str, Any]) -> ServedReply:
    """Call the first offered tool twice (its arguments may be wrong: the environment
    answers with a structured error the agent reads), then answer."""
    turns = sum(m.get("role") == "assistant" for m in request["messages"])
    tools = request.get("tools") or []
    if turns < 2 and tools:
        name = tools[0]["function"]["name"]
        return ServedReply(tool_calls=(ServedToolCall(name, {}),))
    return ServedReply(content="Done: nothing more I can do.")


@pytest.mark.parametrize("env", ["ledger", "support-desk"])
def test_langgraph_agent_under_gymforge_eval(env: str, tmp_path: Path) -> None:
    out = tmp_path / env
    with OpenAITestServer(first_tool_then_answer) as server:
        res = run_cli(
            "eval",
            env,
            "--policy",
            f"harness:{AGENT}",
            "--base-url",
            server.base_url,
            "-n",
            "2",
            "--out",
            out,
        )
    assert res.code == 0, res.stderr
    data = json.loads((out / "eval.json").read_text())
    assert data["metrics"]["episodes"] == 2
    logs = read_episodes(out / "trajectories.jsonl")
    assert len(logs) == 2
    for log in logs:
        kinds = [s.action.kind for s in log.steps[1:]]  # type: ignore[union-attr]
        assert kinds == ["tool_call", "tool_call", "reply"]
        assert log.steps[-1].action.text == "Done: nothing more I can do."  # type: ignore[union-attr]
        for step in log.steps[1:]:
            assert step.policy is not None and step.policy.capture_level == "tokens"
            modes = [t["mode"] for t in step.policy.model_turns or []]
            assert modes and set(modes) <= {"pass-through", "token-in"}
    # LangGraph re-sends its whole history each turn, and it extends: one branch, token-in
    turns = [t for s in logs[0].steps[1:] for t in s.policy.model_turns or []]  # type: ignore[union-attr]
    assert [t["mode"] for t in turns] == ["pass-through", "token-in", "token-in"]
    rep = export(out / "trajectories.jsonl", "trl", tmp_path / "trl.jsonl")
    assert rep.written == 2, rep.as_dict()
