"""Attack: answer at length on a first turn behind a gateway that times out before the client.

A first model turn that runs past ``call_timeout`` on every attempt is the policy's counted
``turn_timeout`` when the server was seen generating meanwhile (``rollout.liveness``;
``test_policy_first_turn_outruns_call_timeout.py``). A served model is often behind a
gateway or load balancer (nginx's ``proxy_read_timeout``, a cloud load balancer, Cloudflare)
whose own read timeout is shorter than the policy's ``call_timeout``: a long generation is
then answered with the gateway's 504 (Cloudflare's 524, a 408), not left unanswered. Those
statuses were read as a failing server (5xx after retries: ``PolicyServerError``), never as
a turn that outran its time, so no evidence was asked for, and a policy that generated at
length exactly on the tasks it would fail had them retried and, retries spent, left out of
the summary. Success of the attack would be a held task missing from the summary. The
defence: a gateway's timeout status is a timeout (the attempt counts among those that ran
past their time), so a turn every attempt of which timed out at the client or at a gateway
is judged by the same evidence; a gateway in front of a server that answers nothing (the
one-token request too) is still a stall, retried.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gymforge.rollout.openai_policy import OpenAIPolicyFactory, Retry
from gymforge.rollout.vllm_policy import VLLMPolicyFactory
from gymforge.testing import OpenAITestServer
from gymforge.testing.openai_server.fake import ServedError, ServedReply, echo_responder
from tests.redteam.test_policy_first_turn_outruns_call_timeout import (
    FAILED,
    TASKS,
    assert_counted,
    play,
    prompts,
)

GATEWAY = 0.3
"""How long the gateway waits on a long generation before its timeout status: well within
``call_timeout`` (the status is the gateway's, whatever the client's clock)."""
RETRY = Retry(max_attempts=2, call_timeout=30.0, base_delay=0.01, max_delay=0.01)


class Gateway:
    """A gateway in front of a model: requests for ``held`` tasks (every request when
    ``held`` is None) generate longer than the gateway waits, and it answers ``status``;
    a one-token request is answered when ``one_token_answered`` (a live server)."""

    def __init__(self, held: set[str] | None, status: int, one_token_answered: bool) -> None:
        self.held, self.status, self.one_token = held, status, one_token_answered

    def _long(self, request: dict[str, Any]) -> bool:
        if self.one_token and request.get("max_tokens") == 1:
            return False
        if self.held is None:
            return True
        asked = {str(m.get("content")) for m in request.get("messages") or ()}
        return bool(asked & self.held)

    def latency(self, request: dict[str, Any]) -> float:
        return GATEWAY if self._long(request) else 0.0

    def respond(self, request: dict[str, Any]) -> ServedReply:
        if self._long(request):
            raise ServedError(self.status, "upstream timed out", code=str(self.status))
        return echo_responder(request)


@pytest.mark.parametrize("status", [504, 524, 408])
def test_a_long_first_turn_the_gateway_timed_out_is_counted(tmp_path: Path, status: int) -> None:
    tasks = TASKS[:4]
    gateway = Gateway(prompts(FAILED), status, one_token_answered=True)
    with OpenAITestServer(responder=gateway.respond, latency=gateway.latency) as srv:
        factory = OpenAIPolicyFactory("m", base_url=srv.base_url, retry=RETRY)
        result = play(tmp_path, factory, tasks, concurrency=1)
    assert_counted(tmp_path, result, tasks, FAILED)


def test_a_long_token_in_first_turn_the_gateway_timed_out_is_counted(tmp_path: Path) -> None:
    gateway = Gateway(None, 504, one_token_answered=True)
    with OpenAITestServer(responder=gateway.respond, latency=gateway.latency) as srv:
        factory = VLLMPolicyFactory("m", base_url=srv.base_url, retry=RETRY)
        result = play(tmp_path, factory, FAILED, concurrency=1, policy="vllm:m")
    assert_counted(tmp_path, result, FAILED, FAILED)


def test_a_gateway_in_front_of_a_server_answering_nothing_is_still_infrastructure(
    tmp_path: Path,
) -> None:
    gateway = Gateway(None, 504, one_token_answered=False)
    with OpenAITestServer(responder=gateway.respond, latency=gateway.latency) as srv:
        factory = OpenAIPolicyFactory("m", base_url=srv.base_url, retry=RETRY)
        result = play(tmp_path, factory, FAILED, 1, max_retries=0)
    assert result.summary["episodes"] == 0
    assert len(result.errors) == len(FAILED)
