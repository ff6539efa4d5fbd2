"""Attack: write what makes the simulated user's model server fail, and take the episode out.

``support_desk`` can put a model behind a server in the customer's place (``user_policy``).
What that model reads is the agent's text, and a server can fail on certain text only (vLLM's
template or tokenizer answering 500, a gateway's filter answering 502 or cutting the
connection). The customer's server failure was raised out of ``env.step`` as infrastructure:
the episode retried, then given up unwritten, and a few in a row stopped the run. An agent
failing a task could take it out of the count by writing what the customer's server fails
on. Success of the attack is an episode missing from the summary.

The defence, the rule of ``kit.blame`` (``blame_failure``) the policy's own server is judged
by: a server failure of the customer's model on the agent's text is asked once more, and,
failed again, the customer's model is asked its instructions and a greeting alone; answered,
the failure was the agent's text's doing and the customer hangs up (``failed``), the episode
judged as any other. A server that fails the greeting too is down: raised as before
(retried, never scored).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from moderation import TRIGGER

from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.core.types import Observation, Reply
from gymforge.envs.support_desk import SupportDeskEnv
from gymforge.kit.blame import FAILED
from gymforge.rollout import LocalExecutor, RunSpec, run
from gymforge.rollout.openai_policy import OpenAIPolicyFactory, Retry
from gymforge.testing import OpenAITestServer
from gymforge.testing.openai_server import ServedError
from gymforge.world.counterpart import PROBE

TASKS = SupportDeskEnv.tasks.sample(3, 5, "train")
RETRY = Retry(max_attempts=2, call_timeout=10.0, base_delay=0.01, max_delay=0.01)


def failing(request: dict[str, Any]) -> str:
    """A customer model whose server fails any request with ``TRIGGER`` in it (500)."""
    if TRIGGER in json.dumps(request["messages"]):
        raise ServedError(500, "the engine failed on this prompt")
    return "I'm not sure what you mean."


class Provoker:
    """The agent: says the failed-on text on its turn ``at`` (1 or 2), else keeps talking."""

    name = checkpoint = "provoker"
    at = 1

    async def start(self, ctx: EpisodeContext) -> None:
        self.turns = 0

    async def act(self, observation: Observation) -> PolicyTurn:
        self.turns += 1
        text = f"Hello. {TRIGGER}" if self.turns == self.at else "Is there anything else?"
        return PolicyTurn(Reply(text=text))


class LateProvoker(Provoker):
    at = 2


def _run(responder: Any, out: Path, agent: type[Provoker]) -> Any:
    with OpenAITestServer(responder) as srv:
        factory = OpenAIPolicyFactory("customer", base_url=srv.base_url, retry=RETRY)
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


@pytest.mark.parametrize("agent", [Provoker, LateProvoker])
def test_a_failed_on_agent_text_ends_the_episode_not_the_count(
    agent: type[Provoker], tmp_path: Path
) -> None:
    result, _requests = _run(failing, tmp_path, agent)
    assert not result.errors, result.errors
    assert result.summary["episodes"] == len(TASKS)
    assert result.summary["infra_errors"] == 0
    for episode in result.episodes:
        assert episode["terminated"] and not episode["success"]
        assert episode["steps"] == agent.at  # the failed-on reply was the last: hung up
    records = [json.loads(line) for line in (tmp_path / "trajectories.jsonl").open()]
    facts = [r["info"]["verdict"]["facts"] for r in records if "verdict" in r.get("info", {})]
    assert [f["user_stop"] for f in facts] == [FAILED] * len(TASKS)


def test_a_customer_server_down_is_still_infrastructure(tmp_path: Path) -> None:
    # the greeting fails too: a server down, not the agent's text; never counted
    def down(request: dict[str, Any]) -> str:
        if (
            TRIGGER in json.dumps(request["messages"])
            or request["messages"][-1]["content"] == PROBE
        ):
            raise ServedError(503, "overloaded")
        return "I'm not sure what you mean."

    result, _requests = _run(down, tmp_path, Provoker)
    assert result.summary["episodes"] == 0
    assert result.errors
