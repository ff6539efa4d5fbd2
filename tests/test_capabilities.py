"""The capability contract: tooling asks an environment for what it needs beyond
``reset/step/snapshot/close`` through one handle per capability, and an environment that
lacks one gets one clear error naming the environment and the missing member. ``ToolEnv``
declares its capabilities; a misspelt or mistyped declaration is refused when the class is
defined; ``verify``/``on_reply`` are one hook each, ``def`` or ``async def``."""

from __future__ import annotations

import asyncio
import json
import random
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from gymforge.core.capabilities import (
    BUDGET,
    CAPABILITIES,
    COMPLETION_REPLY,
    DATASETS,
    GRADE_REPLY,
    ORACLE,
    ORACLE_PLAN,
    PREFLIGHT,
    TASK,
    TASKS,
    TOOLSET,
    WRITES,
    Capability,
    require,
    supported,
)
from gymforge.core.env import EnvSpec, StepResult
from gymforge.core.errors import UserError
from gymforge.core.policy import episode_context
from gymforge.core.types import Action, Message, Observation, Reply, State, Task, ToolCall
from gymforge.core.verdict import Verdict
from gymforge.envs.code import CodeEnv
from gymforge.envs.digits import DigitsEnv
from gymforge.envs.ledger import LedgerEnv
from gymforge.evaluate.episodes import oracle_path_lengths
from gymforge.evaluate.grade import grade_file
from gymforge.integrations.trl import task_rows
from gymforge.kit.redteam import (
    AttackNotApplicable,
    CraftedReply,
    OracleStopShort,
    OracleThenCollateral,
)
from gymforge.kit.tool_env import ToolEnv
from gymforge.qa.target import QATarget
from gymforge.qa_profile import QA, QAProfile
from gymforge.registry.handle import open_env
from gymforge.registry.resolve import make_env
from gymforge.world.attacks import PlanAttack

TOOL_ENV_PROVIDES: tuple[Capability[Any], ...] = (
    TASKS,
    TASK,
    ORACLE,
    ORACLE_PLAN,
    QA,
    TOOLSET,
    BUDGET,
    DATASETS,
)


class BareEnv:
    """The core contract and nothing else: no tasks, oracle, profile, tools or datasets."""

    spec = EnvSpec("bare", "1.0.0")

    async def reset(self, task_id: str, seed: int) -> Observation:
        return Observation(messages=(Message(role="user", content="say anything"),))

    async def step(self, action: Action) -> StepResult:
        return StepResult.make(Observation(messages=()), {"task": 0.0}, terminated=True)

    async def snapshot(self) -> State:
        return {}

    async def close(self) -> None:
        return None


@pytest.mark.parametrize("cap", (*CAPABILITIES, QA), ids=lambda c: c.name)
def test_an_env_lacking_a_capability_gets_one_error_naming_env_and_member(
    cap: Capability[Any],
) -> None:
    env = BareEnv()
    assert supported(env, cap) is None
    with pytest.raises(UserError) as err:
        require(env, cap, "the test")
    text = str(err.value)
    assert "\n" not in text
    assert "bare environment" in text and repr(cap.name) in text and "the test needs it" in text
    assert all(member in text for member in cap.members)


def test_a_member_that_is_none_counts_as_missing_except_the_current_task() -> None:
    class Half(BareEnv):
        tasks = None
        qa = None
        toolset = None
        budget = None
        task = None

    env = Half()
    never_none: tuple[Capability[Any], ...] = (TASKS, QA, TOOLSET, BUDGET)
    for cap in never_none:
        assert supported(env, cap) is None, cap.name
    found = supported(env, TASK)  # None before the first reset is what "task" means
    assert found is not None and found.task is None


def test_tool_env_provides_what_it_declares() -> None:
    ledger, digits, code = LedgerEnv(), DigitsEnv(), CodeEnv()
    for cap in TOOL_ENV_PROVIDES:
        assert supported(ledger, cap) is not None, cap.name
        assert supported(digits, cap) is not None, cap.name
    assert supported(digits, WRITES) is None
    code_only: tuple[Capability[Any], ...] = (PREFLIGHT, GRADE_REPLY, COMPLETION_REPLY)
    for cap in code_only:
        assert supported(code, cap) is not None, cap.name
        assert supported(ledger, cap) is None, cap.name
    assert require(ledger, QA).qa is LedgerEnv.qa
    assert require(ledger, TASKS).tasks is LedgerEnv.tasks


def test_a_world_env_provides_its_write_guard() -> None:
    from gymforge.envs.support_desk import SupportDeskEnv

    env = SupportDeskEnv()
    try:
        assert supported(env, WRITES) is not None
    finally:
        asyncio.run(env.close())


# ---- each tool entry point refuses a missing capability with that one error -------------
def test_qa_target_of_a_bare_env_has_no_tasks_no_oracle_and_the_default_profile() -> None:
    target = QATarget.from_factory(BareEnv)
    assert target.tasks is None and not target.has_oracle and target.budget is None
    assert target.profile == QAProfile()


def test_task_export_needs_a_task_source() -> None:
    with pytest.raises(UserError, match="bare exposes no TaskSource"):
        task_rows(BareEnv, n=2)


def test_a_dataset_for_an_env_without_datasets_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text('{"task_id": "x", "prompt": "p"}\n')
    with pytest.raises(UserError, match="does not take datasets"):
        open_env("ledger", data)


def test_grading_a_language_line_needs_grade_reply(tmp_path: Path) -> None:
    task_id = LedgerEnv.tasks.sample(1, 0)[0]
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"task_id": task_id, "answer": "x", "language": "rust"}) + "\n")
    out = tmp_path / "graded.jsonl"
    summary = asyncio.run(grade_file(partial(make_env, "ledger"), answers, out))
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert summary.errors == 1 and not row["passed"]
    assert "ledger answers take no 'language' field" in row["error"]


def test_oracle_path_lengths_of_a_bare_env_are_unknown() -> None:
    assert oracle_path_lengths(BareEnv())("anything") is None


async def _first_turn(attack: Any, env: Any) -> Any:
    await attack.start(episode_context(attack, env, "t", 0))
    return await attack.act(await env.reset("t", 0))


@pytest.mark.parametrize(
    "attack",
    [OracleThenCollateral(), CraftedReply(lambda text: text + "!")],
    ids=["collateral", "crafted"],
)
def test_a_redteam_attack_on_an_env_without_oracle_names_it(attack: Any) -> None:
    with pytest.raises(UserError, match=r"bare environment has no oracle.*oracle_action\(\)"):
        asyncio.run(_first_turn(attack, BareEnv()))


def test_an_attack_that_needs_a_plan_is_not_applicable_without_one() -> None:
    with pytest.raises(AttackNotApplicable, match="no oracle plan"):
        asyncio.run(_first_turn(OracleStopShort(), BareEnv()))


def test_a_plan_attack_on_an_env_without_a_current_task_names_it() -> None:
    attack = PlanAttack(lambda task, plan: plan)

    with pytest.raises(UserError, match=r"no current task \(capability 'task': task\)"):
        asyncio.run(_first_turn(attack, BareEnv()))


# ---- declarations: a typo or a wrong type is refused when the class is defined -----------
@pytest.mark.parametrize("name", ["qa_", "QA", "Qa", "q_a"])
def test_a_misspelt_qa_is_refused(name: str) -> None:
    with pytest.raises(UserError, match=rf"{name} is not a declaration.*did you mean 'qa'"):
        type("Typo", (LedgerEnv,), {name: QAProfile(verifier_kinds=("state",))})


def test_a_qa_profile_under_another_name_is_refused() -> None:
    with pytest.raises(UserError, match=r"profile is not a declaration.*did you mean 'qa'"):

        class Renamed(LedgerEnv):
            profile = QAProfile()


def test_a_qa_of_the_wrong_type_is_refused() -> None:
    with pytest.raises(UserError, match="qa must be a QAProfile, got dict"):

        class Wrong(LedgerEnv):
            qa = {"verifier_kinds": ("state",)}  # type: ignore[assignment]


def test_a_misspelt_task_source_and_budget_are_refused() -> None:
    with pytest.raises(UserError, match="did you mean 'tasks'"):
        type("Typo", (LedgerEnv,), {"Tasks": LedgerEnv.tasks})
    with pytest.raises(UserError, match="did you mean 'budget'"):
        type("Typo", (LedgerEnv,), {"_budget_": LedgerEnv.budget, "budget_": LedgerEnv.budget})


def test_ordinary_class_attributes_and_overrides_are_not_refused() -> None:
    class Fine(LedgerEnv):
        qa = QAProfile(verifier_kinds=("state",))
        instructions = "be brief"
        max_retries = 3
        _private_qa = QAProfile()

        def helper(self) -> int:
            return 1

    assert Fine.qa.verifier_kinds == ("state",)


# ---- one hook, one name: def or async def, awaited through one adapter ---------------------
@pytest.mark.parametrize("twin", ["verify_async", "on_reply_async"])
def test_a_former_twin_hook_is_refused_with_the_fix(twin: str) -> None:
    async def hook(self: Any, *args: Any) -> Any:
        return None

    with pytest.raises(UserError, match=rf"{twin} is no longer a hook: write .*async def"):
        type("Twin", (DigitsEnv,), {twin: hook})


class Dialogue(ToolEnv):
    """A two-turn dialogue: the user answers the first reply, the second is judged."""

    spec = EnvSpec("dialogue", "1.0.0")
    tasks = DigitsEnv.tasks

    def init_world(self, task: Task, r: random.Random) -> dict[str, Any]:
        return {"turns": 0}

    def on_reply(self, text: str) -> list[Message] | None:
        self.world["turns"] += 1
        return [Message(role="user", content="and?")] if self.world["turns"] == 1 else None

    def verify(self, task: Task, world: Any, reply: str) -> Verdict:
        return Verdict(passed=reply == "done", facts={"turns": world["turns"]})


class AsyncDialogue(Dialogue):
    async def on_reply(self, text: str) -> list[Message] | None:  # type: ignore[override]
        await asyncio.sleep(0)
        return super().on_reply(text)

    async def verify(self, task: Task, world: Any, reply: str) -> Verdict:  # type: ignore[override]
        await asyncio.sleep(0)
        return super().verify(task, world, reply)


@pytest.mark.parametrize("cls", [Dialogue, AsyncDialogue], ids=["def", "async_def"])
def test_sync_and_async_hooks_run_the_same_episode(cls: type[Dialogue]) -> None:
    async def go() -> list[tuple[Any, ...]]:
        env = cls()
        task_id = cls.tasks.sample(1, 0)[0]
        await env.reset(task_id, 0)
        out = []
        for action in (Reply(text="hello"), Reply(text="done")):
            r = await env.step(action)
            out.append((r.observation.messages, r.reward_components, r.terminated, r.info))
        return out

    first, second = asyncio.run(go())
    assert first[0] == (Message(role="user", content="and?"),) and not first[2]
    assert second[2] and second[3]["verdict"]["passed"] and second[3]["success"]
    assert second[3]["verdict"]["facts"] == {"turns": 2}


def test_the_async_verifiers_of_built_in_envs_still_judge() -> None:
    """Math's pool and the code sandbox judge through ``async def verify``; a wrong math
    answer is still refused (the hook is awaited, not truthy as a coroutine)."""
    from gymforge.envs.math.env import MathEnv

    async def go() -> tuple[bool, bool]:
        env = MathEnv()
        task_id = MathEnv.tasks.sample(1, 0)[0]
        plan = env.oracle_plan(MathEnv.tasks.resolve(task_id))
        assert plan
        await env.reset(task_id, 0)
        good = (await env.step(plan[-1])).info["success"]
        await env.reset(task_id, 0)
        bad = (await env.step(Reply(text="\\boxed{-987654321}"))).info["success"]
        await env.close()
        return good, bad

    assert asyncio.run(go()) == (True, False)


def test_tool_calls_still_dispatch_under_the_adapter() -> None:
    async def go() -> bool:
        env = LedgerEnv()
        task_id = LedgerEnv.tasks.sample(1, 0)[0]
        await env.reset(task_id, 0)
        plan = env.oracle_plan(LedgerEnv.tasks.resolve(task_id)) or []
        result = None
        for action in plan:
            result = await env.step(action)
        assert any(isinstance(a, ToolCall) for a in plan)
        return bool(result and result.info.get("success"))

    assert asyncio.run(go())


def _present_reference(cap: Any, env: object) -> bool:
    """``Capability.present`` as it was: every attribute, then ``all`` over the methods."""
    missing = object()
    for name in cap.attributes:
        value = getattr(env, name, missing)
        if value is missing or (value is None and not cap.nullable):
            return False
    return all(callable(getattr(env, name, None)) for name in cap.methods)


@pytest.mark.parametrize("cap", CAPABILITIES, ids=lambda c: c.name)
def test_present_is_the_reference(cap: Any) -> None:
    """Capabilities of attributes only skip the walk over no methods; every capability
    answers as the reference for environments that have it, lack it, or hold None."""

    class Nones:
        def __getattr__(self, name: str) -> None:
            return None

    class Callables:
        def __getattr__(self, name: str) -> Any:
            return print

    for env in (LedgerEnv(), DigitsEnv(), CodeEnv(), object(), Nones(), Callables()):
        assert cap.present(env) is _present_reference(cap, env)
