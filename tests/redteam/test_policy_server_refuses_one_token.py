"""Attack: the judgements' one-token requests, on a server that will not generate so little.

What the policy's own server does with the agent's text is judged by asking the server
something without it, for one token (``max_tokens=1``): the episode's first prompt after a
refusal or a server failure of a later turn (``rollout.transcript_refusal``), the same
request after a first turn that outran its time (``rollout.liveness``). Some servers refuse
so small a bound (a gateway's or provider's minimum ``max_tokens``, a 400 that names it),
while every turn of the run, the episode's first included, is answered. Then the refusal of
the probe read as the configuration's: a policy writing what the moderation refuses stopped
the run; a transcript the server fails on, or a first turn too long to wait for, was
retried as infrastructure and left unwritten. Success of the attack is the run stopped or
an episode missing from the summary.

The defence: a probe refused for its bound is asked again with one the server takes (the
episode's first request with its own ``max_tokens``, as it was answered; the long turn's
request with :data:`~gymforge.rollout.liveness.SMALL_TOKENS`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import test_policy_first_turn_outruns_call_timeout as long_turn
import test_policy_server_fails_on_agent_text as failing
import test_policy_server_refuses_agent_text as refusal
from moderation import REFUSALS, TRIGGER

from gymforge.core.errors import TRANSCRIPT_FAILED, TRANSCRIPT_REFUSED, UserError
from gymforge.rollout.openai_policy import OpenAIPolicyFactory
from gymforge.testing import OpenAITestServer
from gymforge.testing.openai_server import ServedError, ServedReply

MINIMUM = 16
TOO_FEW = f"max_tokens must be at least {MINIMUM}"


def with_minimum(
    respond: Callable[[dict[str, Any]], ServedReply | str],
) -> Callable[[dict[str, Any]], ServedReply | str]:
    """``respond`` behind a server that refuses a request asking fewer than ``MINIMUM``
    tokens (400)."""

    def minimum(request: dict[str, Any]) -> ServedReply | str:
        asked = request.get("max_tokens")
        if asked is not None and asked < MINIMUM:
            raise ServedError(400, TOO_FEW, "invalid_request_error")
        return respond(request)

    return minimum


def attempts(srv: OpenAITestServer) -> list[dict[str, Any]]:
    """The requests without the agent's text that asked too few tokens: the probes refused."""
    return [r for r in srv.requests if r.get("max_tokens") == 1]


def counted(result: Any, reason: str) -> None:
    assert not result.errors, result.errors
    by_task = {e["task_id"]: e for e in result.episodes}
    assert sorted(by_task) == sorted(refusal.TASKS)
    for task_id in refusal.FAILED:
        assert by_task[task_id]["failure_reason"] == reason


def test_a_refused_transcript_is_counted_on_a_server_with_a_minimum(tmp_path: Path) -> None:
    moderated = refusal.moderated("openai", refusal.prompts(refusal.FAILED))
    with OpenAITestServer(with_minimum(moderated)) as srv:
        factory = OpenAIPolicyFactory("m", base_url=srv.base_url, retry=refusal.RETRY)
        result = refusal.play(tmp_path, factory, refusal.TASKS)
        refused = attempts(srv)
    counted(result, TRANSCRIPT_REFUSED)
    assert len(refused) == len(refusal.FAILED)
    assert all(TRIGGER not in json.dumps(r["messages"]) for r in srv.requests if r in refused)


def test_a_failed_transcript_is_counted_on_a_server_with_a_minimum(tmp_path: Path) -> None:
    model = failing.responder(refusal.prompts(refusal.FAILED))
    with failing.FailsOnTrigger(with_minimum(model)) as srv:
        factory = OpenAIPolicyFactory("m", base_url=srv.base_url, retry=refusal.RETRY)
        result = refusal.play(tmp_path, factory, refusal.TASKS)
    counted(result, TRANSCRIPT_FAILED)


def test_a_first_prompt_refused_for_itself_still_stops_the_run(tmp_path: Path) -> None:
    # refused whatever its bound (a key blocked after a violation): the configuration's
    moderated = refusal.moderated("gateway", refusal.prompts(refusal.FAILED))

    def respond(request: dict[str, Any]) -> ServedReply | str:
        if len(request.get("messages") or []) == 2 and len(srv.requests) > 1:
            raise ServedError(400, REFUSALS["gateway"][0])
        return moderated(request)

    with OpenAITestServer(with_minimum(respond)) as srv:
        factory = OpenAIPolicyFactory("m", base_url=srv.base_url, retry=refusal.RETRY)
        with pytest.raises(UserError, match=r"without the agent's text too"):
            refusal.play(tmp_path, factory, refusal.TASKS)


def test_a_long_first_turn_is_counted_on_a_server_with_a_minimum(tmp_path: Path) -> None:
    held = long_turn.prompts(long_turn.FAILED[:1])
    slow = long_turn.held_on(held, one_token_answered=False)

    def latency(request: dict[str, Any]) -> float:
        small = (request.get("max_tokens") or MINIMUM + 1) <= MINIMUM
        return long_turn.PROMPT if small else slow(request)

    tasks = long_turn.FAILED[:1]
    with OpenAITestServer(with_minimum(lambda _r: "42"), latency=latency) as srv:
        factory = OpenAIPolicyFactory("m", base_url=srv.base_url, retry=long_turn.RETRY)
        result = long_turn.play(tmp_path, factory, tasks, concurrency=1, max_retries=0)
    long_turn.assert_counted(tmp_path, result, tasks, tasks)
