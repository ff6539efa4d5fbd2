"""Typed truth validated once: the model a family built (validated as it was constructed) is
what a reset of that very task gets, with no second validation of its dump; a truth that
came from anywhere else (a task rebuilt from JSON, as a dataset file, a task file or the
wire gives it; a copy with its truth replaced) is still validated, so a tampered one is
refused."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from gymforge.core import Task
from gymforge.envs.ledger import LedgerEnv
from gymforge.envs.ledger.env import FAMILY as LEDGER
from gymforge.envs.ledger.env import LedgerTruth
from gymforge.envs.math.env import MathEnv
from gymforge.envs.math.truth import MathTruth
from gymforge.registry.handle import task_source
from gymforge.registry.resolve import BUILTIN, make_env
from gymforge.tasks.truth import vouched


class _Counting:
    """Counts the calls of ``model.model_validate`` while installed."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, model: type[BaseModel]) -> None:
        self.calls = 0
        real = model.model_validate

        def counted(*args: Any, **kwargs: Any) -> BaseModel:
            self.calls += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(model, "model_validate", counted)


def test_a_reset_does_not_validate_a_generated_truth_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The dict-truth parent of typed truth validated nothing on reset; typed truth parsed
    (validated) every new task's dump again: the cost issue 35 measured."""
    counted = _Counting(monkeypatch, LedgerTruth)
    env = LedgerEnv()
    for seed in range(3):
        task_id = LEDGER.task_id(2, 4_000 + seed)
        asyncio.run(env.reset(task_id, seed))
        assert isinstance(env.truth, LedgerTruth)
        assert env.truth is vouched(env.tasks.resolve(task_id))
    assert counted.calls == 0


def test_every_builtin_family_vouches_for_exactly_what_parsing_gives() -> None:
    """The shortcut is sound only if the built model is the one parsing its dump gives:
    the same type, fields, and fields set (which decide the dump), for every family."""
    checked = 0
    for env_id in sorted(BUILTIN):
        tasks = task_source(make_env(env_id))
        for family in tasks.families.values() if tasks else ():
            for level in sorted(family.levels):
                task = family.task(level, 11)
                built = vouched(task)
                assert built is not None, family.name
                parsed = family.truth_model().model_validate(task.truth)
                assert type(built) is type(parsed), family.name
                assert built == parsed, family.name
                assert built.model_fields_set == parsed.model_fields_set, family.name
                checked += 1
    assert checked >= 60


def _tampered(task: Task, **truth: Any) -> Task:
    """``task`` as JSON from outside gives it (a task file, a dataset row, the wire), with
    its truth changed: a new object, with its own truth dict."""
    data = task.model_dump(mode="json")
    data["truth"] = {**data["truth"], **truth}
    return Task.model_validate(data)


def test_a_tampered_truth_from_outside_is_refused_even_for_a_vouched_id() -> None:
    env = MathEnv()
    family = next(iter(env.tasks.families.values()))
    genuine = family.task(min(family.levels), 5)
    assert isinstance(env.truth_of(genuine), MathTruth)  # the genuine one, vouched
    for bad in (
        _tampered(genuine, answer=["not", "a", "string"]),
        _tampered(genuine, form="roman"),
        _tampered(genuine, extra_field=1),
    ):
        assert bad.task_id == genuine.task_id
        assert vouched(bad) is None
        with pytest.raises(ValidationError):
            env.truth_of(bad)


def test_a_copy_with_its_truth_replaced_is_validated_again() -> None:
    env = LedgerEnv()
    genuine = LEDGER.task(1, 6)
    assert env.truth_of(genuine) is vouched(genuine)
    bad = genuine.model_copy(update={"truth": {**genuine.truth, "moves": [{"to": 3}]}})
    assert vouched(bad) is None
    with pytest.raises(ValidationError):
        env.truth_of(bad)
    # a copy with another field updated keeps the very truth dict, and its vouching
    held = genuine.model_copy(update={"split": "heldout"})
    assert held.truth is genuine.truth


def test_a_dataset_row_is_validated_on_reset(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """Dataset tasks are never vouched for: their truth is parsed (validated) by the
    environment's codec like any truth from outside."""
    path = tmp_path / "rows.jsonl"
    path.write_text('{"task_id": "row-1", "question": "1+1?", "answer": "2"}\n')
    env = MathEnv()
    env.use_dataset(env.load_dataset(path))
    task = env.tasks.resolve("row-1")
    assert vouched(task) is None
    counted = _Counting(monkeypatch, MathTruth)
    asyncio.run(env.reset("row-1", 0))
    assert counted.calls == 1 and env.truth.answer == "2"


@pytest.mark.usefixtures("young_heap")
def test_a_vouched_entry_lives_only_as_long_as_its_task() -> None:
    from gymforge.tasks import truth as truth_module

    task = LEDGER.task(1, 8)
    key = id(task)
    assert truth_module._VOUCHED[key][0]() is task
    del task
    gc.collect()
    assert key not in truth_module._VOUCHED
