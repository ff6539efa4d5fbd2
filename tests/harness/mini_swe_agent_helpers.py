"""What the mini-swe-agent tests share: where its venv is, the harness command that runs the
example under it, and a scripted model that plays a fix as ``bash`` tool calls."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from gymforge.testing.openai_server.fake import Responder, ServedReply, ServedToolCall

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("MINI_SWE_AGENT_VENV") or ROOT / ".venv-mini-swe-agent")
AGENT = ROOT / "examples" / "mini_swe_agent" / "agent.py"
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


def mini_swe_agent_policy() -> str:
    """``harness-cmd:`` running the example under the mini-swe-agent venv, or a skip saying
    how to build it (``make test-harness`` builds it first)."""
    python = VENV / "bin" / "python"
    if not python.exists():
        pytest.skip(f"no {VENV}: run scripts/mini_swe_agent_setup.sh (make test-harness does)")
    return f"harness-cmd:{python} {AGENT}"


def bash_script(commands: Sequence[str]) -> Responder:
    """A model that answers turn k with a ``bash`` tool call of ``commands[k]`` (then submits),
    the way mini-swe-agent's tool-calling models answer."""
    script = [*commands, SUBMIT]

    def respond(request: dict[str, Any]) -> ServedReply:
        k = sum(m.get("role") == "assistant" for m in request.get("messages", []))
        command = script[min(k, len(script) - 1)]
        call = ServedToolCall("bash", {"command": command})
        return ServedReply(content=f"THOUGHT: step {k + 1}.", tool_calls=(call,))

    return respond


def assert_token_exact(turns: Sequence[dict[str, Any]], *, one_branch: bool = True) -> None:
    """Every turn has token ids, and each turn's prompt ids begin with the previous turn's
    (on its branch) prompt and completion ids: an extending sequence, as the model saw it.
    ``one_branch``: the whole episode is one such sequence (a harness that drops a turn from
    its history, as mini-swe-agent drops a malformed answer, starts a new branch)."""
    assert turns, "no model turns were recorded"
    for turn in turns:
        assert turn["capture_level"] == "tokens", turn["capture_level"]
        assert turn["prompt_token_ids"] and turn["completion_token_ids"]
    last: dict[int, dict[str, Any]] = {}
    for turn in turns:
        before = last.get(turn["branch"])
        if before is not None:
            seen = before["prompt_token_ids"] + before["completion_token_ids"]
            assert turn["prompt_token_ids"][: len(seen)] == seen, (before["index"], turn["index"])
            assert len(turn["prompt_token_ids"]) > len(seen)
        last[turn["branch"]] = turn
    if one_branch:
        assert {t["branch"] for t in turns} == {0}
