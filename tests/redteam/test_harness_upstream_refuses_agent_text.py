"""Attack: through a harness, write what a guardrail in front of vLLM refuses to read.

A harness policy's model requests go through gymforge's proxy, which continues each
conversation token-in: it renders the harness's new messages (the tool results, which echo
the agent's text) through the upstream's ``/tokenize`` before it asks ``/completions``. A
guardrail in front of every endpoint of that vLLM refuses such a rendering with a 400; the
proxy answered the harness with a 502 and marked the episode's inference server as failed,
so the harness falling over on it was infrastructure: retried, and, the retries spent, left
unscored. An agent failing a task took it out of the count by calling a tool whose error
echoes words the guardrail refuses. Success of the attack would be that episode missing
from the summary. The refusal is now relayed as the upstream's own 4xx, as the chat
endpoint's refusal always was: a harness that falls over on it after it acted is the
policy's counted failure (``harness_crashed``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aiohttp import web

from gymforge.testing.openai_server import (
    OpenAITestServer,
    ServedError,
    ServedReply,
    ServedToolCall,
)
from gymforge.trajectory.reader import read_episodes, verify_chain
from tests.serve.harness_agents import AGENTS, run_harness

TRIGGER = "<<words the guardrail refuses>>"
GUARDRAIL = "Request blocked by guardrail: prohibited content"


class Guardrailed(OpenAITestServer):
    """A guardrail in front of every endpoint of a vLLM server: any request with
    ``TRIGGER`` in it is refused (400)."""

    async def _tokenize(self, request: web.Request) -> web.Response:
        if TRIGGER.encode() in await request.read():  # aiohttp keeps the body for the next read
            error = {"message": GUARDRAIL, "type": "BadRequestError", "code": None}
            return web.json_response({"error": error}, status=400)
        return await super()._tokenize(request)


def respond(request: dict[str, Any]) -> ServedReply | str:
    """The model calls a tool of its naming (the environment's error echoes the name) and
    then answers; the guardrail refuses what holds ``TRIGGER``."""
    messages = request.get("messages") or []
    if TRIGGER in json.dumps(messages, ensure_ascii=False):
        raise ServedError(400, GUARDRAIL)
    if any(m.get("role") == "assistant" for m in messages):
        return "done"
    return ServedReply(tool_calls=(ServedToolCall(TRIGGER, {}),))


def test_a_guardrail_refusing_a_tool_result_leaves_the_episode_counted(tmp_path: Path) -> None:
    with Guardrailed(respond) as upstream:
        result = run_harness(f"harness:{AGENTS}:tool_agent", upstream, tmp_path, max_retries=1)
    assert not result.errors, result.errors
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["infra_retries"] == 0 and summary["infra_errors"] == 0
    assert summary["failure_reasons"] == {"harness_crashed": 1}
    [log] = read_episodes(tmp_path / "trajectories.jsonl")
    verify_chain(log)
    assert log.end is not None and log.end.truncated and not log.end.success
