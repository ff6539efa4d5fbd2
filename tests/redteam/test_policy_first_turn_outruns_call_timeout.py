"""Attack: answer at length on a single-turn task's only turn, past the policy's call timeout.

A model turn that runs past ``call_timeout`` on every attempt after the agent acted is the
episode's counted failure (``turn_timeout``: ``test_policy_turn_outruns_call_timeout.py``).
Before the first action it was a stalled start: retried as infrastructure and, the retries
spent, left unwritten. A single-turn task (``math``) has only that one turn, so a policy
that generated ``max_tokens`` (longer than ``call_timeout``) exactly on the tasks it would
fail took them out of success and pass@k: the summary counted only the tasks it answered.

The server here answers some tasks promptly and holds the others' requests far past
``call_timeout``, as a long generation does. Success of the attack would be a held task
missing from the summary. A turn that times out before the agent acted is now the policy's
counted failure when the server was seen generating while it waited
(``rollout.liveness``): other turns of the run answered during each of its attempts, or,
without that, the same request asking for one token answered. A server that answers nothing
(the one-token request included), or that hung part way through the turn's wait, is a stall:
still retried, never counted (the fix must not count infrastructure as the policy's
failures).

The same attack through ``--episode-timeout``: set below the turn's attempts, it cut the long
first turn short, a stalled start, retried. The runner now asks the policy the same question
(``StallJudgingPolicy.server_answering``): a server seen generating makes it the episode's
counted ``episode_timeout``; one answering nothing leaves it a stalled start.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from gymforge.core.errors import EPISODE_TIMEOUT, TURN_TIMEOUT
from gymforge.envs.math.env import MathEnv
from gymforge.rollout import LocalExecutor, RunSpec, run
from gymforge.rollout.openai_policy import OpenAIPolicyFactory, Retry
from gymforge.rollout.server import ServerFactory
from gymforge.rollout.vllm_policy import VLLMPolicyFactory
from gymforge.testing import OpenAITestServer
from gymforge.trajectory.reader import read_episodes, verify_chain

CALL_TIMEOUT = 1.0
HELD = 30.0
"""How long the server holds a request it does not answer promptly: far past
``CALL_TIMEOUT`` (the server is stopped, its handlers cancelled, when the test ends: nothing
waits this out)."""
PROMPT = 0.2
"""How long the server takes to answer a task it answers: well within ``CALL_TIMEOUT``."""
RETRY = Retry(max_attempts=2, call_timeout=CALL_TIMEOUT, base_delay=0.01, max_delay=0.01)
TASKS = MathEnv.tasks.sample(18, 7)
FAILED = TASKS[:2]
"""The tasks the policy would fail: the ones it answers at length."""
LONG_RUN = [*FAILED, *(t for t in MathEnv.tasks.sample(30, 8) if t not in FAILED)][:28]
"""The held tasks, then enough answered ones (at ``PROMPT`` each, one at a time) to keep
the server answering for about 6.5 s: through both attempts of a held turn's episode and of
its retry, should a window of its first see no answer on a loaded machine (a cold first
answer taking longer than ``CALL_TIMEOUT``)."""


def prompts(task_ids: Sequence[str]) -> set[str]:
    """The user prompts of ``task_ids`` (seed 0), as the server sees them in a request."""

    async def read() -> set[str]:
        env = MathEnv()
        try:
            found = set()
            for task_id in task_ids:
                obs = await env.reset(task_id, 0)
                found.add(str(obs.messages[-1].content))
            return found
        finally:
            await env.close()

    return asyncio.run(read())


def held_on(
    held: set[str] | None, *, one_token_answered: bool
) -> Callable[[dict[str, Any]], float]:
    """The server's latency: ``HELD`` for a request of a task in ``held`` (every request when
    ``held`` is None), ``PROMPT`` for the others; a one-token request is answered promptly
    when ``one_token_answered`` (a live server generating: one token takes no time)."""

    def latency(request: dict[str, Any]) -> float:
        if one_token_answered and request.get("max_tokens") == 1:
            return PROMPT
        if held is None:
            return HELD
        asked = {str(m.get("content")) for m in request.get("messages") or ()}
        return HELD if asked & held else PROMPT

    return latency


def play(
    tmp_path: Path,
    factory: ServerFactory,
    tasks: Sequence[str],
    concurrency: int,
    policy: str = "openai:m",
    max_retries: int = 1,
    episode_timeout: float | None = None,
) -> Any:
    spec = RunSpec(
        env="math",
        policy=policy,
        jobs=[(t, 0) for t in tasks],  # in this order: the held tasks are started first
        out=tmp_path,
        concurrency=concurrency,
        max_retries=max_retries,
        episode_timeout=episode_timeout,
    )
    executor = LocalExecutor(MathEnv, factory, close_policy=factory.aclose)
    return asyncio.run(run(spec, executor))


def assert_counted(
    out: Path,
    result: Any,
    tasks: Sequence[str],
    timed_out: Sequence[str],
    reason: str = TURN_TIMEOUT,
) -> None:
    """Every task scored; those in ``timed_out`` as truncated failures for ``reason``, with
    no step, in a file whose every episode passes the reader's checks."""
    for log in read_episodes(out / "trajectories.jsonl"):
        verify_chain(log)
    assert not result.errors
    assert result.summary["episodes"] == len(tasks)
    by_task = {e["task_id"]: e for e in result.episodes}
    assert sorted(by_task) == sorted(tasks)
    for task_id, episode in by_task.items():
        if task_id in timed_out:
            assert episode["steps"] == 0 and episode["truncated"] and not episode["success"]
            assert episode["failure_reason"] == reason
        else:
            assert episode["steps"] == 1 and episode["failure_reason"] != reason


@pytest.mark.parametrize("path", ["lean", "fast", "typed"])
def test_a_first_turn_held_while_the_server_answers_others_is_counted(
    tmp_path: Path, path: str
) -> None:
    # the held turns' one-token requests are held too: the evidence is the other tasks'
    # answers, one slot answering them throughout both attempts of the two held turns
    with OpenAITestServer(latency=held_on(prompts(FAILED), one_token_answered=False)) as srv:
        factory = OpenAIPolicyFactory("m", base_url=srv.base_url, retry=RETRY, request_path=path)  # type: ignore[arg-type]
        result = play(tmp_path, factory, LONG_RUN, concurrency=len(FAILED) + 1)
    assert_counted(tmp_path, result, LONG_RUN, FAILED)


def test_a_long_first_turn_with_nothing_else_in_flight_is_counted(tmp_path: Path) -> None:
    tasks = TASKS[1:4]  # one held turn (each waits out two attempts), two answered ones
    with OpenAITestServer(latency=held_on(prompts(FAILED), one_token_answered=True)) as srv:
        factory = OpenAIPolicyFactory("m", base_url=srv.base_url, retry=RETRY)
        result = play(tmp_path, factory, tasks, concurrency=1)
        probes = [r for r in srv.requests if r.get("max_tokens") == 1]
    assert_counted(tmp_path, result, tasks, FAILED)
    assert len(probes) == 1  # one one-token request for the timed-out turn, none for others


def test_a_long_token_in_first_turn_is_counted(tmp_path: Path) -> None:
    # vllm: sends token ids to /completions; every turn runs long, one token does not
    # one task: every turn is held, so a second would wait out the same two attempts again
    with OpenAITestServer(latency=held_on(None, one_token_answered=True)) as srv:
        factory = VLLMPolicyFactory("m", base_url=srv.base_url, retry=RETRY)
        result = play(tmp_path, factory, FAILED[:1], concurrency=1, policy="vllm:m")
    assert_counted(tmp_path, result, FAILED[:1], FAILED[:1])


@pytest.mark.parametrize("concurrency", [1, len(FAILED)])
def test_a_server_that_answers_nothing_is_still_infrastructure(
    tmp_path: Path, concurrency: int
) -> None:
    # as many silent turns as run at once: alone (its one-token request the only evidence
    # asked for), or in flight together (each the other's evidence: none)
    tasks = FAILED[:concurrency]
    with OpenAITestServer(latency=held_on(None, one_token_answered=False)) as srv:
        factory = OpenAIPolicyFactory("m", base_url=srv.base_url, retry=RETRY)
        result = play(tmp_path, factory, tasks, concurrency, max_retries=0)
    assert result.summary["episodes"] == 0
    assert len(result.errors) == len(tasks)
    assert all("no response within" in e for e in result.errors)


def test_a_server_that_hangs_during_the_wait_is_still_infrastructure(tmp_path: Path) -> None:
    # the first task's turn is held; the second is answered during its first attempt, then
    # the server answers nothing (the third held too): answers before a hang are no evidence
    held, answered = [TASKS[0], TASKS[2]], TASKS[1]
    with OpenAITestServer(latency=held_on(prompts(held), one_token_answered=False)) as srv:
        factory = OpenAIPolicyFactory("m", base_url=srv.base_url, retry=RETRY)
        result = play(tmp_path, factory, TASKS[:3], concurrency=2, max_retries=0)
    assert [e["task_id"] for e in result.episodes] == [answered]
    assert len(result.errors) == len(held)
    assert all("no response within" in e for e in result.errors)


EPISODE_TIMEOUT_S = 1.0
SLOW_RETRY = Retry(max_attempts=2, call_timeout=3.0, base_delay=0.01, max_delay=0.01)
"""Attempts longer than ``EPISODE_TIMEOUT_S``: the episode's time runs out first."""


def test_a_long_first_turn_cut_by_the_episode_timeout_is_counted(tmp_path: Path) -> None:
    tasks = TASKS[:4]
    with OpenAITestServer(latency=held_on(prompts(FAILED), one_token_answered=True)) as srv:
        factory = OpenAIPolicyFactory("m", base_url=srv.base_url, retry=SLOW_RETRY)
        result = play(tmp_path, factory, tasks, 1, episode_timeout=EPISODE_TIMEOUT_S)
    assert_counted(tmp_path, result, tasks, FAILED, EPISODE_TIMEOUT)


def test_a_first_turn_cut_by_the_episode_timeout_on_a_silent_server_is_retried(
    tmp_path: Path,
) -> None:
    with OpenAITestServer(latency=held_on(None, one_token_answered=False)) as srv:
        factory = OpenAIPolicyFactory("m", base_url=srv.base_url, retry=SLOW_RETRY)
        result = play(
            tmp_path, factory, FAILED, len(FAILED), max_retries=0, episode_timeout=EPISODE_TIMEOUT_S
        )
    assert result.summary["episodes"] == 0
    assert len(result.errors) == len(FAILED)
    assert all("exceeded its" in e for e in result.errors)
