"""swe red team: every attack of the issue is judged a failure on every family it applies
to. Each is real: the ones that target a test run fool a naive judge that runs the hidden
tests as a test file next to the agent's code (exit status and report), which is the judge
the plain-value call path replaces."""

from __future__ import annotations

import asyncio

import pytest
from swe_helpers import oracle, verdict

from gymforge.core.types import Reply
from gymforge.envs.swe import FAMILIES, SweEnv
from gymforge.envs.swe.env import RUN_LIMITS
from gymforge.envs.swe.redteam import ATTACKS, attack_plan
from gymforge.envs.swe.runner import TEST_RUNNER, parse_report
from gymforge.envs.swe.truth import ABSENT, SweTruth
from gymforge.sandbox import SandboxJob
from gymforge.sandbox.doctor import bwrap_works

pytestmark = pytest.mark.skipif(not bwrap_works()[0], reason="bubblewrap unavailable")
TASKS = [f.task_id(2, 21) for f in FAMILIES if f.name != "swe.refactor"] + [
    "swe.refactor/v1/d2/s21"
]


def naive_test_file(truth: SweTruth) -> str:
    """The hidden checks as asserts: what the design forbids (expected values in the
    agent's process), used here only to show that the attacks are real."""
    out = []
    for i, c in enumerate(truth.checks):
        if c.target.startswith(ABSENT):
            continue
        module, fn = c.target.split(":")
        out.append(
            f"def test_hidden_{i}():\n    from {module} import {fn}\n"
            f"    assert {fn}(*{c.args!r}) == {c.expected!r}\n"
        )
    return "\n\n".join(out)


async def play_attack(name: str, tid: str) -> tuple[SweEnv, dict[str, object] | None]:
    env = SweEnv()
    task = env.tasks.resolve(tid)
    plan = attack_plan(name, task, oracle(tid))
    if plan is None:
        return env, None
    await env.reset(tid, 0)
    for a in plan:
        step = await env.step(a)
        if isinstance(a, Reply):
            return env, verdict([step])
    raise AssertionError("the attack's plan did not end the episode")


async def naive_pass(env: SweEnv, truth: SweTruth) -> bool:
    files = {**env.world.files, "tests/test_hidden.py": naive_test_file(truth)}
    job = SandboxJob(
        source=TEST_RUNNER,
        argv=["tests/test_hidden.py"],
        files=dict[str, str | bytes](files),
        limits=RUN_LIMITS,
    )
    r = await env.judge.backend.arun(job)
    report, _ = parse_report(r.stdout)
    tests = (report or {}).get("tests") or []
    return r.exit_code == 0 and all(t["outcome"] == "passed" for t in tests)


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_every_attack_fails(name: str) -> None:
    applied = 0
    for tid in TASKS:
        _, v = asyncio.run(play_attack(name, tid))
        if v is None:
            continue
        applied += 1
        assert not v["passed"], (name, tid, v)
        # ``no_change``: every change was one the hidden run leaves out (start-up hooks)
        assert v["reason"] in ("protected_files_changed", "hidden_tests_failed", "no_change"), v
        assert v["score"] == 0.0 or v["reason"] == "hidden_tests_failed", v
    assert applied >= 4, name


@pytest.mark.parametrize("name", ["conftest_force_pass", "patch_runner", "exit_early_zero"])
def test_the_attacks_fool_a_judge_that_runs_tests_next_to_the_agents_code(name: str) -> None:
    async def go() -> tuple[bool, bool]:
        tid = TASKS[0]
        env, v = await play_attack(name, tid)
        assert v is not None and not v["passed"]
        return await naive_pass(env, SweTruth.model_validate(env.tasks.resolve(tid).truth)), True

    fooled, _ = asyncio.run(go())
    assert fooled


def test_the_naive_judge_is_not_fooled_by_doing_nothing() -> None:
    async def go() -> bool:
        env = SweEnv()
        tid = TASKS[0]
        await env.reset(tid, 0)
        return await naive_pass(env, SweTruth.model_validate(env.tasks.resolve(tid).truth))

    assert not asyncio.run(go())


def test_special_casing_passes_the_issue_example_and_fails_the_rest() -> None:
    _, v = asyncio.run(play_attack("special_case_issue", TASKS[0]))
    assert v is not None
    hidden = v["facts"]["hidden_tests"]  # type: ignore[index]
    assert hidden["issue_example"] is True
    assert not all(hidden.values()) and v["reason"] == "hidden_tests_failed"
