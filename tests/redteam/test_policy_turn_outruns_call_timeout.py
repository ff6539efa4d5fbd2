"""Attack: answer at length once the episode is going badly, past the policy's call timeout.

How long a model turn takes is the policy's own output: a long enough generation outlasts
``call_timeout`` on every attempt. That was a ``PolicyServerError``, an infrastructure
error: the episode was retried and, the retries spent, written as nothing, so a policy that
rambles on the episodes it is failing takes them out of the count (the summary here held no
episode at all). Success would be any such episode missing from the summary: once the
agent has acted, a turn that times out on every attempt must end the episode as truncated
and counted (``turn_timeout``), as an episode past ``--episode-timeout`` is. A turn that
times out before the agent acted while the server answers nothing (here every first turn is
held, its one-token request too) is still a stalled start, retried; one that times out while
the server answers is counted too (``test_policy_first_turn_outruns_call_timeout.py``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from gymforge.core.errors import TURN_TIMEOUT
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout import LocalExecutor, RunSpec, run
from gymforge.rollout.openai_policy import OpenAIPolicyFactory, Retry
from gymforge.testing import OpenAITestServer
from gymforge.testing.openai_server import ServedReply, ServedToolCall, scripted_responder

CALL_TIMEOUT = 2.0
LONG_TURN = 30.0
"""How long the model generates on a long turn: far past ``CALL_TIMEOUT``."""
RETRY = Retry(max_attempts=2, call_timeout=CALL_TIMEOUT, base_delay=0.01, max_delay=0.01)
TASKS = LedgerEnv.tasks.sample(2, 9)
REPLIES = scripted_responder(
    [ServedReply(tool_calls=(ServedToolCall("search_customers", {"name": "x"}),)), "done"]
)


def long_from_turn(k: int) -> Any:
    """The server's latency: a long generation from the model's turn ``k`` (0-based) on."""

    def latency(request: dict[str, Any]) -> float:
        turn = sum(m.get("role") == "assistant" for m in request["messages"])
        return LONG_TURN if turn >= k else 0.0

    return latency


def play(tmp_path: Path, long_from: int, max_retries: int = 1) -> Any:
    with OpenAITestServer(REPLIES, latency=long_from_turn(long_from)) as srv:
        factory = OpenAIPolicyFactory("m", base_url=srv.base_url, retry=RETRY)
        spec = RunSpec(
            env="ledger",
            policy="openai:m",
            jobs=[(t, 0) for t in TASKS],
            out=tmp_path,
            concurrency=len(TASKS),
            max_retries=max_retries,
        )
        executor = LocalExecutor(LedgerEnv, factory, close_policy=factory.aclose)
        return asyncio.run(run(spec, executor))


def test_a_turn_past_the_call_timeout_after_acting_is_a_counted_failure(tmp_path: Path) -> None:
    result = play(tmp_path, long_from=1)  # the first turn acts, the second runs long
    assert not result.errors
    assert result.summary["episodes"] == len(TASKS)
    for episode in result.episodes:
        assert episode["steps"] == 1 and episode["truncated"] and not episode["success"]
        assert episode["failure_reason"] == TURN_TIMEOUT


@pytest.mark.slow  # the default run has this case on a 1 s call timeout: a silent server's
# first turns are retried (test_policy_first_turn_outruns_call_timeout.py's
# test_a_server_that_answers_nothing_is_still_infrastructure); here it waits out 6 s
def test_a_first_turn_past_the_call_timeout_is_still_retried(tmp_path: Path) -> None:
    result = play(tmp_path, long_from=0, max_retries=0)
    assert result.summary["episodes"] == 0
    assert len(result.errors) == len(TASKS)
    assert all("no response within" in e for e in result.errors)
