"""Attack: through a harness, make the inference server fail, and take the episode out of the count.

A harness policy's model requests go through gymforge's proxy. When the upstream fails a
request (a 5xx, a cut connection) the proxy answers the harness with that failure and marks
the episode's server as failed, so a harness that falls over on it is infrastructure:
retried, and, the retries spent, left unscored. Two ways a policy decides that:

- after it acted, every request holds its output: a server (vLLM's template or tokenizer, a
  gateway's filter) that fails only on what the model wrote fails the harness's next
  request on every attempt;
- on its first turn, an answer too long for the harness's own client timeout: the harness
  gives up and falls over before it acted, which was a stalled start (retried).

Success of the attack is the episode missing from the summary. The defence judges such a
crash as the server policies judge their turns (``core.blame``,
``rollout.transcript_refusal``, ``rollout.liveness``): a server failure after the harness
had a turn answered is the policy's counted failure (``harness_crashed``) when the
upstream answers the episode's first request for one token and fails the harness's failed
request again, sent once more; a first request the harness gave up on is when the same
request for one token is answered. An outage
(``test_harness_crash_after_upstream_failure_is_infra.py``) and a stall stay infrastructure.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import test_policy_server_fails_on_agent_text as failing
from aiohttp import web
from moderation import TRIGGER

from gymforge.serve.harness.context import HarnessContext
from gymforge.testing.openai_server import OpenAITestServer, ServedReply, ServedToolCall
from gymforge.trajectory.reader import read_episodes, verify_chain
from tests.serve.harness_agents import AGENTS, run_harness

HERE = "test_harness_upstream_fails_on_agent_text"


def respond(request: dict[str, Any]) -> ServedReply | str:
    """The model searches for ``TRIGGER`` (every later request holds it), then answers."""
    if any(m.get("role") == "assistant" for m in request.get("messages") or []):
        return "done"
    return ServedReply(tool_calls=(ServedToolCall("search_customers", {"name": TRIGGER}),))


def assert_counted(out: Path, result: Any) -> None:
    assert not result.errors, result.errors
    summary = json.loads((out / "summary.json").read_text())
    assert summary["infra_retries"] == 0 and summary["infra_errors"] == 0
    assert summary["failure_reasons"] == {"harness_crashed": 1}
    [log] = read_episodes(out / "trajectories.jsonl")
    verify_chain(log)
    assert log.end is not None and log.end.truncated and not log.end.success


def probes(srv: OpenAITestServer) -> list[dict[str, Any]]:
    return [r for r in srv.requests if r.get("max_tokens") == 1]


def test_a_server_failing_on_the_agents_text_leaves_the_episode_counted(tmp_path: Path) -> None:
    for fault in ("500", "reset"):
        out = tmp_path / fault
        with failing.FailsOnTrigger(respond) as upstream:
            upstream.fault = fault
            result = run_harness(f"harness:{AGENTS}:tool_agent", upstream, out, max_retries=1)
            sent = probes(upstream)
        assert_counted(out, result)
        assert len(sent) == 1 and TRIGGER not in json.dumps(sent[0]["messages"])


async def impatient_agent(ctx: HarnessContext) -> str:
    """A harness whose client gives up on a model call after 0.2 s (and falls over)."""
    model = openai.AsyncOpenAI(
        base_url=ctx.base_url, api_key=ctx.api_key, max_retries=0, timeout=0.2
    )
    r = await model.chat.completions.create(model=ctx.model, messages=list(ctx.messages))  # type: ignore[arg-type]
    await model.close()
    return r.choices[0].message.content or ""


def test_a_first_answer_too_long_for_the_harness_is_counted(tmp_path: Path) -> None:
    # the model answers at length (0.6 s) a request asking more than one token: longer than
    # the harness waits; the same request for one token is answered at once
    with OpenAITestServer(lambda _r: "a long answer") as upstream:
        upstream.latency = lambda body: 0.0 if body.get("max_tokens") == 1 else 0.6
        result = run_harness(f"harness:{HERE}:impatient_agent", upstream, tmp_path, max_retries=1)
        sent = probes(upstream)
    assert_counted(tmp_path, result)
    assert len(sent) == 1


class FailsOnOtherFirstAnswers(OpenAITestServer):
    """A server that answers the first prompt it sees and fails every full-length first
    request of any other (500): what the model generates there is what it cannot return.
    One token of the same request is answered."""

    async def _handle(self, request: Any, required: str, build: Any) -> Any:
        body = json.loads(await request.read())
        messages = body.get("messages") or []
        prompt = json.dumps(messages[:2])
        first_turn = not any(m.get("role") == "assistant" for m in messages)
        self.seen = getattr(self, "seen", None) or prompt
        if first_turn and body.get("max_tokens") != 1 and prompt != self.seen:
            error = {"message": "tool call parser failed", "type": "InternalServerError"}
            return web.json_response({"error": error}, status=500)
        return await super()._handle(request, required, build)


def test_a_first_answer_the_server_fails_is_counted(tmp_path: Path) -> None:
    # the first episode is answered (the upstream answers whole turns); the second one's
    # first answer fails on every attempt while its first request for one token is answered
    def answer(request: dict[str, Any]) -> ServedReply | str:
        return "done"

    with FailsOnOtherFirstAnswers(answer) as upstream:
        policy = f"harness:{AGENTS}:tool_agent"
        result = run_harness(policy, upstream, tmp_path, n=2, max_retries=1, concurrency=1)
        sent = probes(upstream)
    assert not result.errors, result.errors
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["episodes"] == 2 and summary["infra_errors"] == 0
    assert summary["failure_reasons"].get("harness_crashed") == 1, summary
    assert len(sent) == 1
