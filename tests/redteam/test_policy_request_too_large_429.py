"""Attack: grow the transcript past the server's tokens-per-minute limit, and take the
episode out of the count.

OpenAI answers a request larger than the organisation's whole per-minute token budget with
a 429, ``Request too large for MODEL ... on tokens per min (TPM): Limit L, Requested R``:
no wait makes room for it, since one request alone asks for more than a minute allows. The
server policies read every 429 as load: the turn was retried, the episode given up
unwritten, and a few such episodes in a row stopped the run (``stop_after_failed_tasks``)
with every episode not yet played. Once the agent acted, what outgrows the budget is its
own transcript: a policy failing a task could take it out of the count (success rate,
pass@k, a group's advantages) by writing at length.

The defence: such a 429 is the context's limit, as a 413 is a body limit in bytes
(``rollout.context_full``): the episode ends truncated, ``context_length``, a counted
failure. A 429 of load (``Rate limit reached ... Please try again in 20ms``) is still
retried.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import test_harness_upstream_fails_on_agent_text as harness
import test_policy_server_refuses_agent_text as refusal
from moderation import TRIGGER
from test_policy_server_fails_on_agent_text import holds_trigger, responder

from gymforge.core.errors import ContextLengthExceeded
from gymforge.rollout.context_full import is_context_full
from gymforge.rollout.openai_policy import OpenAIPolicyFactory
from gymforge.testing import OpenAITestServer
from gymforge.testing.openai_server import ServedError, ServedReply
from tests.serve.harness_agents import AGENTS, run_harness

TASKS, FAILED, RETRY = refusal.TASKS, refusal.FAILED, refusal.RETRY

TOO_LARGE = (
    "Request too large for gpt-4o in organization org-abc on tokens per min (TPM): Limit "
    "30000, Requested 31204. The input or output tokens must be reduced in order to run "
    "successfully. Visit https://platform.openai.com/account/rate-limits to learn more."
)
LOAD = (
    "Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): Limit "
    "30000, Used 29800, Requested 900. Please try again in 1.4s. Visit "
    "https://platform.openai.com/account/rate-limits to learn more."
)


def over_budget(request: dict[str, Any]) -> ServedReply | str:
    if holds_trigger(json.dumps(request).encode()):
        raise ServedError(429, TOO_LARGE, "rate_limit_exceeded")
    return MODEL(request)


MODEL = responder(refusal.prompts(FAILED))


@pytest.mark.parametrize("path", ["auto", "fast"])
def test_a_transcript_over_the_per_minute_budget_is_a_counted_truncation(
    tmp_path: Path, path: str
) -> None:
    with OpenAITestServer(over_budget) as srv:
        factory = OpenAIPolicyFactory("m", base_url=srv.base_url, retry=RETRY, request_path=path)
        result = refusal.play(tmp_path, factory, TASKS)
    assert not result.errors, result.errors
    by_task = {e["task_id"]: e for e in result.episodes}
    assert sorted(by_task) == sorted(TASKS)
    for task_id, episode in by_task.items():
        if task_id in FAILED:
            assert episode["steps"] == 1 and episode["truncated"] and not episode["success"]
            assert episode["failure_reason"] == ContextLengthExceeded.reason
        else:
            assert episode["steps"] == 2


def test_a_429_of_load_is_still_retried() -> None:
    assert is_context_full(429, TOO_LARGE, "rate_limit_exceeded")
    assert not is_context_full(429, LOAD, "rate_limit_exceeded")
    assert not is_context_full(429, "Too Many Requests")


def test_through_a_harness_the_crash_on_it_is_counted(tmp_path: Path) -> None:
    # the proxy relays the upstream's 429 to the harness, which falls over on it: a crash
    # after a refusal of the transcript, as after a 413, counted (harness_crashed), never an
    # upstream failure retried and left unscored
    def upstream_model(request: dict[str, Any]) -> ServedReply | str:
        if TRIGGER in json.dumps(request.get("messages") or []):
            raise ServedError(429, TOO_LARGE, "rate_limit_exceeded")
        return harness.respond(request)

    with OpenAITestServer(upstream_model) as upstream:
        result = run_harness(f"harness:{AGENTS}:tool_agent", upstream, tmp_path, max_retries=1)
    harness.assert_counted(tmp_path, result)
