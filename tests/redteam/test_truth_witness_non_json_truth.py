"""Attack (on QA, by an honest environment): a truth that is not strict JSON crashes every check.

QA witnesses every episode it plays (``gymforge.qa.truth_witness``): the task's truth, as
canonical JSON, before and after. A truth model may hold values strict JSON has no text for,
and the authoring kit takes them: a ``set[str]`` field (``dump_truth`` hands plain fields on
as they are), a float a dataset row left ``NaN`` (a missing value). The witness's canonical
JSON raised on them (``TypeError: Object of type set is not JSON serializable``, ``ValueError:
Out of range float values are not JSON compliant``) before the oracle's first episode, so
every check that plays one failed with an error that names neither the witness nor the
truth, for an environment that plays and verifies correctly. Success of the attack would be
any such episode raising. The defence: the witness reads a truth strict JSON refuses by a
text of its own (sets sorted, NaN and infinities as JSON's extensions name them, anything
else by its type and ``repr``), so such an episode is witnessed, an edit of it still caught.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from gymforge.authoring import (
    Budget,
    EnvSpec,
    IntKnob,
    ParamSpace,
    Reply,
    Task,
    TaskFamily,
    TaskSource,
    ToolCall,
    ToolEnv,
    Verdict,
    tool,
)  # fmt: skip
from gymforge.core.types import Action
from gymforge.qa.episodes import play
from gymforge.qa.truth_witness import TruthEdited
from gymforge.rollout.scripted import OraclePolicy
from gymforge.world.attacks import PlanAttack


class Row(BaseModel):
    model_config = ConfigDict(frozen=True)
    answer: int
    price: float  # a dataset's missing value: NaN
    tags: set[str]


class RowFamily(TaskFamily[Row]):
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, Row]:
        answer = r.randrange(1, 100)
        tags = {f"tag{r.randrange(1000)}" for _ in range(params["tags"])}
        return f"Reply with {answer}.", Row(answer=answer, price=float("nan"), tags=tags)


class RowEnv(ToolEnv[Row, dict[str, Any]]):
    spec = EnvSpec("rows", "0.1.0", description="Reply with the number.")
    tasks = TaskSource.of([RowFamily("rows.say", 1, {1: ParamSpace({"tags": IntKnob(3, 9)})})])
    budget = Budget(max_steps=4)

    def init_world(self, task: Task, r: random.Random) -> dict[str, Any]:
        return {}

    @tool
    def tag(self, name: str) -> str:
        """Tag the row.

        Args:
            name: The tag.
        """
        self.truth.tags.add(name)  # the bug the witness is for: an edit of the truth
        return "tagged"

    def verify(self, task: Task, world: dict[str, Any], reply: str) -> Verdict:
        passed = reply.strip() == str(self.truth_of(task).answer)
        return Verdict(passed=passed, reason=None if passed else "wrong", verifier="rows@1")

    def oracle_plan(self, task: Task) -> list[Action]:
        return [Reply(text=str(self.truth_of(task).answer))]


TASK_IDS = RowEnv.tasks.sample(3, 0)


def _play(policy: Any, task_id: str) -> list[dict[str, Any]]:
    async def go() -> list[dict[str, Any]]:
        env = RowEnv()
        try:
            return await play(env, policy, task_id, 0)
        finally:
            await env.close()

    return asyncio.run(go())


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_a_truth_with_a_set_and_nan_is_witnessed(task_id: str) -> None:
    assert _play(OraclePolicy(), task_id)[-1]["success"] is True


def _tag_first(task: Task, plan: list[Action]) -> list[Action]:
    return [ToolCall(name="tag", arguments={"name": "zzz"}), *plan]


def test_an_edit_of_such_a_truth_is_still_caught() -> None:
    with pytest.raises(TruthEdited, match=r"truth\.tags"):
        _play(PlanAttack(_tag_first), TASK_IDS[0])
