"""Attack: on the tasks it fails, write a first answer the server cannot return, and take the
episode out of the count.

A real server can fail on what the model generates, not only on what it is sent: vLLM's
tool-call parser raises on a malformed call and the request answers 500; a gateway fails
or cuts the connection on an answer its filter will not pass. On the episode's first turn
the request holds none of the agent's text, so nothing judged such a failure: it was
retried as a failing server, the episode given up unwritten after its retries, and a few
in a row stopped the run. A policy writing such an answer on the tasks it would fail (the
same seed gives the same answer on every attempt) took them out of the success rate,
pass@k and its group's advantages.

Here the server fails every full request of the tasks the policy fails (500, 502, a reset
connection) and answers their first prompt for one token, as a server whose failure is the
answer's does. The defence: the first turn is judged as any later one
(``rollout.transcript_refusal.judged``): the first prompt for one token answered, the turn
asked once more and failed again, the episode is the policy's counted ``transcript_failed``
with no step, once the server answered a whole turn of the run. A server failing the
one-token request too is down, and one that never answered a whole turn may fail every
answer (its configuration): both retried, never counted, the run stopped as before.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import test_policy_server_refuses_agent_text as refusal
from aiohttp import web

from gymforge.core.errors import TRANSCRIPT_FAILED
from gymforge.rollout.openai_policy import OpenAIPolicyFactory
from gymforge.rollout.vllm_policy import VLLMPolicyFactory
from gymforge.testing import OpenAITestServer
from gymforge.testing.openai_server import ServedReply, ServedToolCall, fake_detokenize
from gymforge.trajectory.reader import read_episodes, verify_chain

TASKS, FAILED, RETRY = refusal.TASKS, refusal.FAILED, refusal.RETRY
ORDER = [TASKS[2], FAILED[0], TASKS[3], FAILED[1]]
"""A task the policy solves first: the server is seen answering whole turns."""


class FailsOnAnswer(OpenAITestServer):
    """A server whose every full-length request of a task in ``failing`` fails (``fault``):
    what the model generates there is what it cannot return. A one-token request of the
    same prompt is answered (one token is not the answer that fails)."""

    fault = "500"
    failing: list[str] = []
    probe_fails = False

    async def _handle(self, request: web.Request, required: str, build: Any) -> Any:
        body = json.loads(await request.read())
        if self._fails(body):
            if self.fault == "reset":
                self.faults.appendleft("reset")
            else:
                error = {"message": "tool call parser failed", "type": "InternalServerError"}
                return web.json_response({"error": error}, status=int(self.fault))
        return await super()._handle(request, required, build)

    def _fails(self, body: dict[str, Any]) -> bool:
        return asks_failing(body, self.failing, probe_spared=not self.probe_fails)


def asks_failing(body: dict[str, Any], failing: list[str], probe_spared: bool) -> bool:
    """Whether request ``body`` (chat messages or token-in prompt ids) is of a task whose
    reset prompt is in ``failing``; a one-token request never is when ``probe_spared``."""
    if body.get("max_tokens") == 1 and probe_spared:
        return False
    prompt = body.get("prompt")
    if isinstance(prompt, list):
        text = json.dumps(fake_detokenize(prompt), ensure_ascii=False)
    else:
        text = json.dumps(body.get("messages") or [], ensure_ascii=False)
    return any(p in text for p in failing)


def respond(request: dict[str, Any]) -> ServedReply | str:
    if any(m.get("role") == "assistant" for m in request.get("messages") or []):
        return "done"
    return ServedReply(tool_calls=(ServedToolCall("search_customers", {"name": "x"}),))


def serve(fault: str = "500", probe_fails: bool = False) -> FailsOnAnswer:
    srv = FailsOnAnswer(respond)
    srv.fault, srv.failing, srv.probe_fails = fault, refusal.prompts(FAILED), probe_fails
    return srv


@pytest.mark.parametrize("fault", ["500", "502", "reset"])
@pytest.mark.parametrize("policy", ["openai:m", "vllm:m"])
def test_a_first_answer_the_server_fails_is_a_counted_failure(
    tmp_path: Path, fault: str, policy: str
) -> None:
    with serve(fault) as srv:
        result = refusal.play(tmp_path, factory_for(policy, srv.base_url), ORDER, policy=policy)
        sent = refusal.probes(srv)
    assert_first_turns_counted(tmp_path, result, TRANSCRIPT_FAILED)
    assert len(sent) == len(FAILED)  # one probe a failed episode: its own first prompt


def factory_for(policy: str, base_url: str) -> Any:
    made = OpenAIPolicyFactory if policy == "openai:m" else VLLMPolicyFactory
    return made("m", base_url=base_url, retry=RETRY)


def assert_first_turns_counted(out: Path, result: Any, reason: str) -> None:
    """Every task written in a file whose episodes pass the reader's checks; the failed
    ones ended, counted as ``reason``, before any step."""
    for log in read_episodes(out / "trajectories.jsonl"):
        verify_chain(log)
    assert not result.errors, result.errors
    by_task = {e["task_id"]: e for e in result.episodes}
    assert sorted(by_task) == sorted(TASKS)
    for task_id, episode in by_task.items():
        if task_id in FAILED:
            assert episode["steps"] == 0 and episode["truncated"] and not episode["success"]
            assert episode["failure_reason"] == reason
        else:
            assert episode["failure_reason"] != reason


def test_a_server_failing_the_one_token_request_too_is_retried_not_counted(
    tmp_path: Path,
) -> None:
    interleaved = [FAILED[0], TASKS[2], FAILED[1], TASKS[3]]
    with serve(probe_fails=True) as srv:
        factory = OpenAIPolicyFactory("m", base_url=srv.base_url, retry=RETRY)
        result = refusal.play(tmp_path, factory, interleaved)
    assert sorted(e["task_id"] for e in result.episodes) == sorted(TASKS[2:])
    assert len(result.errors) == len(FAILED)


def test_a_server_that_never_answered_a_whole_turn_stops_the_run(tmp_path: Path) -> None:
    # every answer fails (a parser configured for another model): the configuration's
    # fault, not the policy's; the run stops as before, nothing counted against the policy
    with serve() as srv:
        srv.failing = refusal.prompts(TASKS)
        factory = OpenAIPolicyFactory("m", base_url=srv.base_url, retry=RETRY)
        result = refusal.play(tmp_path, factory, TASKS)
    assert not result.episodes
    assert result.summary["infra_stopped"]
    assert not refusal.probes(srv)
