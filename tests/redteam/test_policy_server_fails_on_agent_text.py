"""Attack: write what makes the policy's own server fail, and take the episode out of the count.

A real server can fail on certain inputs only: vLLM answers 500 for a prompt its tokenizer,
chat template or tool parser chokes on; a gateway in front of it answers 502 or 503, or
cuts the connection, for a body its filter or its upstream cannot take. Once the agent has
acted, every request of the episode holds its output, so such a failure can be the agent's
own doing, on every attempt. The server policies retried it as a failing server
(``PolicyServerError``, retryable): the episode was retried, then given up unwritten, and a
few such episodes in a row stopped the run (``stop_after_failed_tasks``) with every episode
not yet played. A policy failing a task could take it out of the count (success rate,
pass@k, a group's advantages), or end the batch, by writing what the server fails on.

Here the model's first turn of the tasks it fails searches for ``TRIGGER``; every later
request of those episodes holds it and the server fails it (500, 502, 503, a reset
connection). The defence: after the agent acted, a turn the server failed on every attempt
is judged as a refusal is (``rollout.transcript_refusal``): the episode's first prompt,
none of the agent's text, is asked for one token; answered, the turn is asked once more,
and failed again the episode ends truncated, a counted failure (``transcript_failed``). A
server failing the first prompt too is down, and a turn answered when asked again was a
server that recovered: neither is counted (the first retried, the second played on).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import test_policy_server_refuses_agent_text as refusal
from aiohttp import web
from moderation import TRIGGER

from gymforge.core.errors import POLICY_STOP_REASONS, TRANSCRIPT_FAILED
from gymforge.rollout.openai_policy import OpenAIPolicyFactory
from gymforge.rollout.vllm_policy import VLLMPolicyFactory
from gymforge.testing import OpenAITestServer
from gymforge.testing.openai_server import (
    ServedError,
    ServedReply,
    ServedToolCall,
    fake_detokenize,
)
from gymforge.trajectory.reader import read_episodes

TASKS, FAILED, RETRY = refusal.TASKS, refusal.FAILED, refusal.RETRY
FAULTS = ("500", "502", "503", "reset")


class FailsOnTrigger(OpenAITestServer):
    """A server that fails (``fault``) every request whose body holds ``TRIGGER``: a status,
    or a connection cut before any answer; ``/tokenize`` too (vLLM's token-in path renders
    the tool results there)."""

    fault = "500"

    async def _handle(self, request: web.Request, required: str, build: Any) -> Any:
        if holds_trigger(await request.read()):  # aiohttp keeps the body for the next read
            if self.fault == "reset":
                self.faults.appendleft("reset")
            else:
                return _error(int(self.fault))
        return await super()._handle(request, required, build)

    async def _tokenize(self, request: web.Request) -> web.Response:
        if TRIGGER.encode() in await request.read():
            if self.fault == "reset":
                request.transport.close()  # type: ignore[union-attr]
            return _error(int(self.fault) if self.fault != "reset" else 502)
        return await super()._tokenize(request)


def holds_trigger(raw: bytes) -> bool:
    """Whether a request's body holds ``TRIGGER``: in its text, or in its token-id prompt."""
    if TRIGGER.encode() in raw:
        return True
    prompt = json.loads(raw).get("prompt")
    return isinstance(prompt, list) and TRIGGER in fake_detokenize(prompt)


def _error(status: int) -> web.Response:
    error = {"message": f"upstream failed ({status})", "type": "InternalServerError"}
    return web.json_response({"error": error}, status=status)


def responder(failing: Sequence[str]) -> Callable[[dict[str, Any]], ServedReply | str]:
    """The model: the first turn searches customers (for ``TRIGGER`` on a task whose prompt
    is in ``failing``), the next one answers."""

    def respond(request: dict[str, Any]) -> ServedReply | str:
        messages = request.get("messages") or []
        if any(m.get("role") == "assistant" for m in messages):
            return "done"
        text = json.dumps(messages, ensure_ascii=False)
        name = TRIGGER if any(p in text for p in failing) else "x"
        return ServedReply(tool_calls=(ServedToolCall("search_customers", {"name": name}),))

    return respond


def assert_counted(out: Path, result: Any) -> None:
    refusal.assert_counted(out, result, TRANSCRIPT_FAILED)


def test_the_reason_is_a_policy_stop() -> None:
    assert TRANSCRIPT_FAILED in POLICY_STOP_REASONS  # truncated without a terminal step


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("policy", ["openai:m", "vllm:m"])
def test_a_transcript_the_server_fails_is_a_counted_failure(
    tmp_path: Path, fault: str, policy: str
) -> None:
    with FailsOnTrigger(responder(refusal.prompts(FAILED))) as srv:
        srv.fault = fault
        made = OpenAIPolicyFactory if policy == "openai:m" else VLLMPolicyFactory
        factory = made("m", base_url=srv.base_url, retry=RETRY)
        result = refusal.play(tmp_path, factory, TASKS, policy=policy)
        sent = refusal.probes(srv)
    assert_counted(tmp_path, result)
    if policy == "openai:m":  # the probe: the episode's first prompt, none of the agent's text
        assert len(sent) == len(FAILED)
        assert all([m["role"] for m in p["messages"]] == ["system", "user"] for p in sent)


def test_a_server_down_for_the_first_prompt_too_is_retried_not_counted(tmp_path: Path) -> None:
    # the server fails the one-token request too: a server failing, no evidence that the
    # agent's text is the cause; the episodes are left to a retry, never counted
    model = responder(refusal.prompts(FAILED))

    def respond(request: dict[str, Any]) -> ServedReply | str:
        if request.get("max_tokens") == 1:
            raise ServedError(503, "the server is overloaded")
        return model(request)

    interleaved = [FAILED[0], TASKS[2], FAILED[1], TASKS[3]]
    with FailsOnTrigger(respond) as srv:
        factory = OpenAIPolicyFactory("m", base_url=srv.base_url, retry=RETRY)
        result = refusal.play(tmp_path, factory, interleaved)
    assert sorted(e["task_id"] for e in result.episodes) == sorted(TASKS[2:])
    assert len(result.errors) == len(FAILED)


def test_a_server_that_recovers_plays_the_episode_on(tmp_path: Path) -> None:
    # a server failing for a while (every attempt at the second turn), then back: the first
    # prompt is answered and so is the turn asked once more; the episode goes on, uncounted
    # as a failure of the agent's
    respond = responder([])
    with OpenAITestServer(respond) as srv:

        def flaky(request: dict[str, Any]) -> ServedReply | str:
            messages = request.get("messages") or []
            acted = any(m.get("role") == "assistant" for m in messages)
            if acted and not refusal.probes(srv):  # down until the first prompt is asked
                raise ServedError(500, "the engine restarted")
            return respond(request)

        srv.responder = flaky
        factory = OpenAIPolicyFactory("m", base_url=srv.base_url, retry=RETRY)
        result = refusal.play(tmp_path, factory, TASKS[:1])
        sent = refusal.probes(srv)
    assert not result.errors
    (episode,) = result.episodes
    assert episode["steps"] == 2 and episode["failure_reason"] != TRANSCRIPT_FAILED
    assert len(sent) == 1


def test_a_token_in_turn_asked_once_more_is_sent_as_it_was(tmp_path: Path) -> None:
    # vllm:'s prompt ids grow turn by turn; the turn asked once more after the probe must
    # send the ids a server that never failed would get (no tool result rendered twice)
    def records(out: Path, fail: bool) -> list[Any]:
        respond = responder([])
        with OpenAITestServer(respond) as srv:
            turns: list[int] = []

            def flaky(request: dict[str, Any]) -> ServedReply | str:
                if request.get("max_tokens") != 1:
                    turns.append(1)
                if fail and len(turns) > 1 and not refusal.probes(srv):  # once it acted
                    raise ServedError(500, "the engine restarted")
                return respond(request)

            srv.responder = flaky
            factory = VLLMPolicyFactory("m", base_url=srv.base_url, retry=RETRY)
            result = refusal.play(out, factory, TASKS[:1], policy="vllm:m")
            sent = [r["prompt"] for r in srv.requests if r.get("max_tokens") != 1]
            assert len(refusal.probes(srv)) == fail  # judged: the first prompt asked
        assert not result.errors
        (episode,) = result.episodes
        assert episode["steps"] == 2 and episode["failure_reason"] != TRANSCRIPT_FAILED
        [log] = read_episodes(out / "trajectories.jsonl")
        return [s.policy for s in log.steps] + [sent[-1]]

    assert records(tmp_path / "failed", True) == records(tmp_path / "clean", False)
