"""A multi-turn Verifiers environment under gymforge: Verifiers' own ``GymEnv`` over
gymnasium's ``FrozenLake-v1`` (``vf_frozen_lake.py``), driven turn by turn through Verifiers'
rollout steps (``env_response``, stop conditions, rubric)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from interop_helpers import by_name, needs, qa_report

pytestmark = [needs("verifiers"), needs("gymnasium")]

REF = "verifiers:tests.interop.vf_frozen_lake"
NO_PATH = (
    "not applicable: not supplied by the framework (Verifiers 0.3.1): no oracle: a multi-turn "
    "Verifiers environment has no reference solution path"
)


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    return qa_report(REF, "--episodes", "12")


def test_report(report: dict[str, Any]) -> None:
    checks = by_name(report)
    assert report["passed"] is True
    assert report["not_applicable"] == ["scripted_baselines", "verifier_redteam", "error_paths"]
    for name in report["not_applicable"]:
        assert checks[name]["details"] == NO_PATH, checks[name]
    for name in (
        "replay_determinism",
        "reset_isolation",
        "truncation_accounting",
        "distribution_audit",
        "throughput",
        "trajectory_schema",
        "heldout_exclusion",
    ):
        assert checks[name]["status"] == "pass", checks[name]
    assert "also in a fresh process" in checks["replay_determinism"]["details"]


def play(replies: list[str]) -> list[Any]:
    from gymforge.core.types import Reply
    from gymforge.registry.resolve import make_env

    env = make_env(REF)

    async def run() -> list[Any]:
        task_id = env.tasks.sample(1, 0, "train")[0]  # type: ignore[attr-defined]
        obs = await env.reset(task_id, 0)
        assert [m.role for m in obs.messages] == ["system", "user"]
        assert obs.messages[1].content == "You are on square 0."
        results = []
        for text in replies:
            results.append(await env.step(Reply(text=text)))
            if results[-1].done:
                break
        results.append(await env.snapshot())
        await env.close()
        return results

    return asyncio.run(run())


def test_max_turns_truncates() -> None:
    """``up`` never leaves the top row (no holes there): Verifiers would stop at ``max_turns``
    as if the episode had ended; gymforge truncates it at that turn, unscored."""
    *results, state = play(["3"] * 20)
    assert len(results) == 12 and len(state["turns"]) == 12
    assert all(
        r.observation.messages[0].content.startswith("You are on square ") for r in results[:-1]
    )
    last = results[-1]
    assert (last.truncated, last.terminated) == (True, False)
    assert last.info["end_reason"] == "max_steps" and last.info["success"] is False
    assert "verdict" not in last.info and last.reward == 0.0


def test_environment_ends_the_episode() -> None:
    """An action GymEnv's parser refuses ends the episode on Verifiers' side (its ``is_done``
    stop): terminated, and the rubric scores it."""
    *results, _ = play(["left, please"])
    (last,) = results
    assert (last.terminated, last.truncated) == (True, False)
    facts = last.info["verdict"]["facts"]
    assert facts["stop_condition"] == "is_done" and facts["reward"] == 0.0
    assert last.reward_components == {"rubric.sum_step_rewards": 0.0}
