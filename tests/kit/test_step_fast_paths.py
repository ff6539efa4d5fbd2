"""The shortcuts of a ``ToolEnv`` episode, each held equal to the path it stands for: a step's
costs with its tokens against ``dataclasses.replace``, and the system message kept across
episodes against a fresh one."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from gymforge.core.types import Message, Reply
from gymforge.envs.math.env import MathEnv
from gymforge.reward.standard import StepCosts, with_tokens


def _non_default(f: dataclasses.Field[Any]) -> Any:
    """A value of field ``f``'s type other than its default."""
    return {bool: True, float: -0.25, int: 17}[type(f.default)]


def test_with_tokens_is_replace_for_every_field() -> None:
    """Every field but the tokens carried over: a field added to ``StepCosts`` and left out
    of the shortcut fails here."""
    fields = dataclasses.fields(StepCosts)
    for f in fields:
        costs = StepCosts(**{f.name: _non_default(f)})
        got, want = with_tokens(costs, 5), dataclasses.replace(costs, action_tokens=5)
        assert type(got) is StepCosts and got == want
        assert [getattr(got, g.name) for g in fields] == [getattr(want, g.name) for g in fields]
    assert with_tokens(StepCosts(action_tokens=3), 0).action_tokens == 0


def test_with_tokens_of_a_subclass_is_replace() -> None:
    @dataclasses.dataclass(frozen=True)
    class Priced(StepCosts):
        price: float = 0.0

    costs = Priced(invalid_call=True, price=2.0)
    assert with_tokens(costs, 9) == Priced(invalid_call=True, price=2.0, action_tokens=9)


def _reset(env: MathEnv, task_id: str) -> tuple[Message, ...]:
    return asyncio.run(env.reset(task_id, 0)).messages


def test_the_kept_system_message_is_a_fresh_one() -> None:
    env = MathEnv()
    ids = MathEnv.tasks.sample(3, 1)
    first = _reset(env, ids[0])
    for task_id in ids:
        kept = _reset(env, task_id)
        fresh = _reset(MathEnv(), task_id)
        assert kept == fresh and kept[0] is first[0]  # shared, and what a new one would be
        assert kept[0].model_fields_set == fresh[0].model_fields_set
        assert kept[0].model_dump() == fresh[0].model_dump()


@pytest.mark.parametrize("prompt", ["Answer briefly.", "Be brief \ud800.", ""])
def test_a_new_system_prompt_is_a_new_system_message(prompt: str) -> None:
    env = MathEnv()
    task_id = MathEnv.tasks.sample(1, 2)[0]
    _reset(env, task_id)
    env.system_prompt = prompt  # an instance's own prompt, set between episodes
    messages = _reset(env, task_id)
    want = [Message(role="system", content=prompt)] if prompt else []
    assert list(messages[:-1]) == want
    assert asyncio.run(env.step(Reply(text="\\boxed{1}"))).info["verdict"] is not None
