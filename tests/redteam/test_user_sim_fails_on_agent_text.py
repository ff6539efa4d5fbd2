"""Attack: write what makes the simulated user's model server fail, and take the episode out.

``support_desk`` can put a model behind a server in the customer's place (``user_policy``).
What that model reads is the agent's text, and a server can fail on certain text only (vLLM's
template or tokenizer answering 500, a gateway's filter answering 502 or cutting the
connection). The customer's server failure was raised out of ``env.step`` as infrastructure:
the episode retried, then given up unwritten, and a few in a row stopped the run. An agent
failing a task could take it out of the count by writing what the customer's server fails
on. Success of the attack is an episode missing from the summary.

The defence, the rule of ``core.blame`` (``blame_failure``) the policy's own server is judged
by: a server failure of the customer's model on the agent's text is asked once more, and,
failed again, the customer's model is asked its instructions and a greeting alone; answered,
the failure was the agent's text's doing and the customer hangs up (``failed``), the episode
judged as any other. A server that fails the greeting too is down: raised as before
(retried, never scored).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from moderation import TRIGGER
from test_user_sim_refuses_agent_text import TASKS, Provoker, play_desk

from gymforge.core.blame import FAILED
from gymforge.rollout.openai_policy import Retry
from gymforge.testing.openai_server import ServedError
from gymforge.world.counterpart import PROBE

RETRY = Retry(max_attempts=2, call_timeout=10.0, base_delay=0.01, max_delay=0.01)


def failing(request: dict[str, Any]) -> str:
    """A customer model whose server fails any request with ``TRIGGER`` in it (500)."""
    if TRIGGER in json.dumps(request["messages"]):
        raise ServedError(500, "the engine failed on this prompt")
    return "I'm not sure what you mean."


class LateProvoker(Provoker):
    at = 2


def _run(responder: Any, out: Path, agent: type[Provoker]) -> Any:
    return play_desk(responder, out, agent, retry=RETRY)


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
