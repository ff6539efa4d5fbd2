"""Attack: write what the simulated user's hosted model refuses to read, and end the run.

``support_desk`` can put a model behind a hosted API in the customer's place
(``user_policy``) and ``crm`` in the requester's. A hosted API with a moderation or content
policy answers a request whose text it will not read with a 400 (OpenAI's
``content_policy_violation``, Azure's ``content_filter``, a gateway's guardrail), which the
server policy reads as a configuration mistake: ``PolicyRequestRejected``, not retryable,
so the whole run stops (exit 2) and every episode not yet played goes unscored. What the
simulated user reads is the agent's text, so an agent failing a task could end the run by
writing something the moderation trips on. Success would be any such run stopped or episode
dropped. The defence: the simulated user asks its model again with none of the agent's
text (its instructions and a neutral greeting, as before the agent said anything); when
that is answered, the refusal was the agent's doing and the user hangs up (``refused``),
the episode judged as any other. A model that refuses that request too (a wrong model name,
a bad key, instructions the moderation trips on) is a configuration mistake and still stops
the run.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from moderation import REFUSALS, TRIGGER

from gymforge.core.errors import UserError
from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.core.types import Observation, Reply, ToolCall
from gymforge.envs.crm import CrmEnv
from gymforge.envs.crm.requester import NO_ANSWER
from gymforge.envs.support_desk import SupportDeskEnv
from gymforge.rollout import LocalExecutor, RunSpec, run
from gymforge.rollout.openai_policy import OpenAIPolicyFactory
from gymforge.testing import OpenAITestServer
from gymforge.testing.openai_server import ServedError
from gymforge.world.counterpart import PROBE

TASKS = SupportDeskEnv.tasks.sample(3, 5, "train")


def moderated(kind: str) -> Any:
    """A customer model behind moderation: any request with ``TRIGGER`` in it is refused
    with ``kind``'s refusal; the rest get a short, unhelpful answer."""
    message, code = REFUSALS[kind]

    def respond(request: dict[str, Any]) -> str:
        if TRIGGER in json.dumps(request["messages"]):
            raise ServedError(400, message, code=code)
        return "I'm not sure what you mean."

    return respond


class Provoker:
    """The agent: says the provoking text on its turn ``at`` (1, first), else keeps talking."""

    name = checkpoint = "provoker"
    at = 1

    async def start(self, ctx: EpisodeContext) -> None:
        self.turns = 0

    async def act(self, observation: Observation) -> PolicyTurn:
        self.turns += 1
        text = f"Hello. {TRIGGER}" if self.turns == self.at else "Is there anything else?"
        return PolicyTurn(Reply(text=text))


def play_desk(
    responder: Any, out: Path, agent: type[Provoker] = Provoker, **options: Any
) -> tuple[Any, list[dict[str, Any]]]:
    """``agent`` plays ``TASKS`` of support-desk with its customer on a test server answering
    as ``responder`` (``options``: the customer policy's); the result and the requests."""
    with OpenAITestServer(responder) as srv:
        factory = OpenAIPolicyFactory("customer", base_url=srv.base_url, **options)
        spec = RunSpec(
            env="support-desk",
            policy="provoker",
            jobs=[(t, 0) for t in TASKS],
            out=out,
            max_retries=0,
        )
        executor = LocalExecutor(lambda: SupportDeskEnv(user_policy=factory), agent)
        try:
            return asyncio.run(run(spec, executor)), srv.requests
        finally:
            asyncio.run(factory.aclose())


@pytest.mark.parametrize("kind", sorted(REFUSALS))
def test_a_refused_agent_text_ends_the_episode_not_theplay_desk(kind: str, tmp_path: Path) -> None:
    result, requests = play_desk(moderated(kind), tmp_path)
    probes = [r["messages"] for r in requests if r["messages"][-1]["content"] == PROBE]
    assert len(probes) == len(TASKS)  # one per refusal: the instructions and a greeting
    assert all(len(p) == 2 and TRIGGER not in json.dumps(p) for p in probes)
    assert not result.errors
    assert result.summary["episodes"] == len(TASKS)
    assert result.summary["success_rate"] == 0.0 and result.summary["infra_errors"] == 0
    for episode in result.episodes:
        assert episode["terminated"] and not episode["success"]
        assert episode["steps"] == 1  # the refused reply was the last: the customer hung up
    records = [json.loads(line) for line in (tmp_path / "trajectories.jsonl").open()]
    facts = [r["info"]["verdict"]["facts"] for r in records if "verdict" in r.get("info", {})]
    assert [f["user_stop"] for f in facts] == ["refused"] * len(TASKS)


def _refuse_all(request: dict[str, Any]) -> str:
    raise ServedError(404, "The model `customer` does not exist.", code="model_not_found")


def _moderate_all(request: dict[str, Any]) -> str:
    raise ServedError(400, *REFUSALS["azure"])


@pytest.mark.parametrize("responder", [_refuse_all, _moderate_all])
def test_a_model_that_refuses_without_the_agents_text_stops_theplay_desk(
    responder: Any, tmp_path: Path
) -> None:
    with pytest.raises(UserError, match="without the agent's text too") as err:
        play_desk(responder, tmp_path)
    assert "check its model name, key and instructions" in str(err.value)


@pytest.fixture(scope="module")
def moderated_requester() -> Iterator[OpenAITestServer]:
    with OpenAITestServer(moderated("azure")) as srv:
        yield srv


def test_a_refused_question_gets_no_answer_and_reveals_nothing(
    moderated_requester: OpenAITestServer,
) -> None:
    base = {"distractors": 1, "page_size": 10, "fault_rate": 0.0, "team": "T-EAST"}
    tid = CrmEnv.tasks.families["crm.update_contact"].variant_id({**base, "ambiguous": 1}, 2)

    async def go() -> tuple[list[dict[str, Any]], Any]:
        factory = OpenAIPolicyFactory("requester", base_url=moderated_requester.base_url)
        env = CrmEnv(user_policy=factory)
        try:
            await env.reset(tid, 0)
            out = []
            for question in (f"Which one? {TRIGGER}", "Which contact did you mean?"):
                ask = ToolCall(name="ask_requester", arguments={"question": question})
                out.append((await env.step(ask)).info["tool_result"])
            return out, env.state()["requester"]
        finally:
            await env.close()
            await factory.aclose()

    results, requester = asyncio.run(go())
    assert all(r["ok"] for r in results), [r["error"] for r in results if not r["ok"]]
    assert [r["content"]["answer"] for r in results] == [NO_ANSWER, NO_ANSWER]
    assert [q["revealed"] for q in requester["questions"]] == [[], []]
