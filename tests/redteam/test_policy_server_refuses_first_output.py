"""Attack: on the tasks it fails, write a first answer the server refuses to return, and stop
the run.

A server refuses what the model generates, not only what it is sent. vLLM's chat endpoint
answers any ``ValueError`` raised while it reads the finished answer with a 400
``BadRequestError`` (a parser's ``json.JSONDecodeError``, pydantic's ``ValidationError`` of
a call it cannot read); a gateway's output guardrail (LiteLLM's post-call guardrails)
refuses an answer its filter will not pass with a 400 too. On the episode's first turn a
refusal was read as the configuration's mistake (``PolicyRequestRejected``: "a server
refuses a request, not the answer it would give"), which stops the run: a policy writing
such an answer on a task it fails (the same seed gives the same answer on every attempt)
ended the run, in a trainer the batch, with that episode and every one not yet played
unscored.

Here the server refuses every full request of the tasks the policy fails (400, in vLLM's
and a guardrail's wording) and answers their first prompt for one token. The defence: a
refusal of the first turn is judged as its server failure is
(``rollout.transcript_refusal.judged``): once the server answered a whole turn of the run,
the first prompt for one token answered and the turn refused again when asked once more,
the episode is the policy's counted ``transcript_refused`` with no step. A first prompt
refused for one token too (a wrong model name, a task's prompt the moderation refuses), a
server never seen answering a whole turn, or a first turn asking a bound no answered turn
asked (a hosted API's maximum: "max_tokens is too large", which the one-token probe passes)
still stops the run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import test_policy_server_fails_on_first_output as first_output
import test_policy_server_refuses_agent_text as refusal
from aiohttp import web

from gymforge.core.errors import TRANSCRIPT_REFUSED, UserError
from gymforge.rollout.openai_policy import OpenAIPolicyFactory, Sampling
from gymforge.testing import OpenAITestServer
from gymforge.trajectory.reader import read_episodes

TASKS, FAILED, RETRY = refusal.TASKS, refusal.FAILED, refusal.RETRY
ORDER = [TASKS[2], FAILED[0], TASKS[3], FAILED[1]]
"""A task the policy solves first: the server is seen answering whole turns."""

REFUSALS = {
    "vllm": (
        "1 validation error for list[function-wrap[__log_extra_fields__()]]\n  Invalid "
        "JSON: EOF while parsing a list at line 1 column 12",
        "BadRequestError",
    ),
    "guardrail": ("Violated guardrail policy: output blocked", "guardrail_violation"),
}


class RefusesAnswer(OpenAITestServer):
    """A server that refuses (400) every full-length request of a task in ``failing``:
    what the model generates there is what it will not return. A one-token request of the
    same prompt is answered, unless ``probe_refused``."""

    kind = "vllm"
    failing: list[str] = []
    probe_refused = False

    async def _handle(self, request: web.Request, required: str, build: Any) -> Any:
        body = json.loads(await request.read())
        if self._refuses(body):
            self.requests.append(body)  # refused, but asked: counted as a request
            message, kind = REFUSALS[self.kind]
            error = {"message": message, "type": kind, "code": 400}
            return web.json_response({"error": error, "object": "error"}, status=400)
        return await super()._handle(request, required, build)

    def _refuses(self, body: dict[str, Any]) -> bool:
        return first_output.asks_failing(body, self.failing, probe_spared=not self.probe_refused)


respond, factory_for = first_output.respond, first_output.factory_for


def serve(kind: str = "vllm", probe_refused: bool = False) -> RefusesAnswer:
    srv = RefusesAnswer(respond)
    srv.kind, srv.failing, srv.probe_refused = kind, refusal.prompts(FAILED), probe_refused
    return srv


@pytest.mark.parametrize("kind", sorted(REFUSALS))
@pytest.mark.parametrize("policy", ["openai:m", "vllm:m"])
def test_a_first_answer_the_server_refuses_is_a_counted_failure(
    tmp_path: Path, kind: str, policy: str
) -> None:
    with serve(kind) as srv:
        result = refusal.play(tmp_path, factory_for(policy, srv.base_url), ORDER, policy=policy)
        sent = refusal.probes(srv)
    first_output.assert_first_turns_counted(tmp_path, result, TRANSCRIPT_REFUSED)
    assert len(sent) == len(FAILED)  # one probe a refused episode: its own first prompt


@pytest.mark.parametrize("policy", ["openai:m", "vllm:m"])
def test_a_first_prompt_refused_for_one_token_too_stops_the_run(
    tmp_path: Path, policy: str
) -> None:
    # the prompt itself is refused (a task the moderation refuses, a wrong model name):
    # the configuration's mistake, never the policy's counted failure
    with serve(probe_refused=True) as srv:
        with pytest.raises(UserError, match="refused"):
            refusal.play(tmp_path, factory_for(policy, srv.base_url), ORDER, policy=policy)
        assert len(refusal.probes(srv)) == 1
    ends = [log.end for log in read_episodes(tmp_path / "trajectories.jsonl")]
    assert all(end is None or end.failure_reason != TRANSCRIPT_REFUSED for end in ends)


def test_a_server_that_never_answered_a_whole_turn_stops_the_run(tmp_path: Path) -> None:
    # the first request of the run refused: nothing says the server returns any answer
    with serve() as srv:
        with pytest.raises(UserError, match="refused"):
            refusal.play(tmp_path, factory_for("openai:m", srv.base_url), FAILED)
        assert not refusal.probes(srv)
    assert not list(read_episodes(tmp_path / "trajectories.jsonl"))


class RefusesBound(OpenAITestServer):
    """A hosted API's maximum completion bound: a request asking more is refused (400),
    whatever it would generate."""

    async def _handle(self, request: web.Request, required: str, build: Any) -> Any:
        body = json.loads(await request.read())
        if (body.get("max_tokens") or 0) > 64:
            self.requests.append(body)
            message = "max_tokens is too large: 100. This model supports at most 64 tokens."
            error = {"message": message, "type": "invalid_request_error", "code": 400}
            return web.json_response({"error": error}, status=400)
        return await super()._handle(request, required, build)


def test_a_first_turn_refused_for_a_bound_never_answered_stops_the_run(tmp_path: Path) -> None:
    # turns of the run were answered, all asking 32 tokens at most (another task's budget);
    # this first turn asks 100, over the server's maximum: the configuration's mistake,
    # never the policy's counted failure, however its one-token probe fares
    with RefusesBound(respond) as srv:
        factory = OpenAIPolicyFactory(
            "m", base_url=srv.base_url, retry=RETRY, sampling=Sampling(max_tokens=100)
        )
        factory.turns_answered, factory.widest_answered = 3, 32
        with pytest.raises(UserError, match="too large"):
            refusal.play(tmp_path, factory, FAILED)
        assert not refusal.probes(srv)
    assert not list(read_episodes(tmp_path / "trajectories.jsonl"))
