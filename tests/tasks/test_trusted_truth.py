"""``trusted``: a truth model built from values a family's own code made, without validating
them, held equal to validation: the same model, fields, fields set and JSON as the
constructor gives, for models in general and for every task the built-in families build
(with ``CHECK_TRUSTED`` on, each trusted model is validated as well and a difference
refused); models whose validation does more than check fall back to validating."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, RootModel, ValidationError, field_validator

from gymforge.core import Task
from gymforge.envs.code.families import FAMILIES as CODE
from gymforge.envs.code.truth import CallsTruth, CodeTruth
from gymforge.registry.handle import task_source
from gymforge.registry.resolve import BUILTIN, make_env
from gymforge.tasks import trusted as truth_mod
from gymforge.tasks.trusted import check_trusted, trusted
from gymforge.tasks.truth import vouched
from gymforge.tasks.truth_dump import dump_truth

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class Leaf(BaseModel):
    model_config = _FROZEN

    a: int
    b: str | None = None
    tags: list[str] = Field(default_factory=list)


class Tree(BaseModel):
    model_config = _FROZEN

    leaf: Leaf
    leaves: list[Leaf]
    note: str = "x"


class Checked(BaseModel):
    model_config = _FROZEN

    n: int

    @field_validator("n")
    @classmethod
    def _double(cls, n: int) -> int:
        return n * 2


class Aliased(BaseModel):
    model_config = _FROZEN

    schema_: str = Field(alias="schema")


class ByName(BaseModel):
    """An alias that validation also takes the field's own name for."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_by_name=True)

    source: str = Field(validation_alias="from", serialization_alias="from")
    n: int
    note: str | None = None


class AliasOnly(BaseModel):
    """An alias validation takes instead of the field's name: never built trusted."""

    model_config = _FROZEN

    n: int = Field(alias="count")


class Root(RootModel[Leaf | Tree]):
    model_config = ConfigDict(frozen=True)


def _same(built: BaseModel, want: BaseModel) -> None:
    assert type(built) is type(want)
    assert built == want
    assert built.model_fields_set == want.model_fields_set
    assert list(built.__dict__) == list(want.__dict__)
    assert built.model_dump_json() == want.model_dump_json()
    assert dump_truth(built) == dump_truth(want)


@given(st.integers(), st.none() | st.text(max_size=5), st.lists(st.text(max_size=3)), st.booleans())
def test_trusted_is_the_constructor_on_valid_values(
    a: int, b: str | None, tags: list[str], give_b: bool
) -> None:
    values: dict[str, Any] = {"a": a, "tags": tags}
    if give_b:
        values["b"] = b
    _same(trusted(Leaf, **values), Leaf(**values))
    leaf = Leaf(**values)
    _same(trusted(Tree, leaf=leaf, leaves=[leaf, leaf]), Tree(leaf=leaf, leaves=[leaf, leaf]))
    _same(trusted(Root, root=leaf), Root(leaf))


def test_a_default_is_a_fresh_copy_as_the_constructor_gives() -> None:
    one, two = trusted(Leaf, a=1), trusted(Leaf, a=2)
    assert one.tags == [] and one.tags is not two.tags
    assert one.model_fields_set == {"a"} and dump_truth(one) == {"a": 1}


class Noted(BaseModel):
    model_config = _FROZEN

    a: int
    note: str | None = "n"
    tags: list[str] = []


class Made(BaseModel):
    model_config = _FROZEN

    n: int

    def __new__(cls, *args: Any, **kwargs: Any) -> Made:
        return super().__new__(cls)


def test_atom_defaults_are_the_field_s_own_and_collections_fresh() -> None:
    one, two = trusted(Noted, a=1), trusted(Noted, a=2, note=None)
    _same(one, Noted(a=1))
    _same(two, Noted(a=2, note=None))
    assert one.tags == [] and one.tags is not two.tags  # a copy each time, as validation
    _same(trusted(Noted, tags=["x"], a=3), Noted(tags=["x"], a=3))  # out of field order


def test_a_model_with_its_own_new_is_validated() -> None:
    assert trusted(Made, n="1").n == 1  # validated: the string became the int


def test_a_model_whose_validation_does_more_is_validated() -> None:
    assert trusted(Checked, n=2).n == 4
    assert trusted(Aliased, schema_="s").schema_ == "s"
    with pytest.raises(ValidationError):
        trusted(Checked, n="x")


def test_unknown_or_missing_fields_are_refused() -> None:
    with pytest.raises(TypeError, match="no field"):
        trusted(Leaf, a=1, c=2)
    with pytest.raises(TypeError, match="no field"):
        trusted(Leaf, c=1, b="x", tags=[])
    with pytest.raises(TypeError, match="without its field 'a'"):
        trusted(Leaf, b="x")


@pytest.mark.parametrize(
    "values",
    [{"a": "1"}, {"a": 1.0}, {"a": True}, {"a": 1, "tags": "ab"}, {"a": 1, "tags": [1]}],
)
def test_the_check_refuses_values_validation_would_change_or_refuse(
    values: dict[str, Any],
) -> None:
    with pytest.raises((AssertionError, ValidationError)):
        check_trusted(trusted(Leaf, **values))


def test_the_check_runs_in_trusted_when_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(truth_mod, "CHECK_TRUSTED", True)
    with pytest.raises(AssertionError):
        trusted(Leaf, a=1.0)
    tests = [{"args": (1,), "expected": 1}]  # a tuple where a list is declared
    with pytest.raises(AssertionError):
        trusted(CallsTruth, kind="calls", entry_point="f", tests=tests)


SEEDS = 25


def test_every_builtin_family_builds_what_validation_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many seeds per level, with every trusted model checked as it is built; and what a
    reset gets for the task is what parsing its dump gives, to the byte."""
    monkeypatch.setattr(truth_mod, "CHECK_TRUSTED", True)
    checked = 0
    for env_id in sorted(BUILTIN):
        if env_id == "swe":
            continue
        tasks = task_source(make_env(env_id))
        for family in tasks.families.values() if tasks else ():
            for level in sorted(family.levels):
                for seed in range(SEEDS):
                    task = family.task(level, 1_000 + 37 * seed)
                    built = vouched(task)
                    assert built is not None, family.name
                    parsed = family.truth_model().model_validate(task.truth)
                    _same(built, parsed)
                    assert json.dumps(task.truth) == json.dumps(dump_truth(parsed))
                    checked += 1
    assert checked >= 60 * SEEDS


def test_a_tampered_code_test_is_refused() -> None:
    """``CallTest`` is a validated dict: every key, no extra ones, ``args`` a list."""
    task = CODE[2].task(2, 5)
    test = task.truth["tests"][0]
    assert isinstance(test, dict)
    for bad in (
        {**test, "extra": 1},
        {"args": test["args"]},
        {**test, "args": "x"},
        [test["args"], test["expected"]],
    ):
        data = task.model_dump(mode="json")
        data["truth"] = {**data["truth"], "tests": [bad]}
        with pytest.raises(ValidationError):
            CODE[2].truth_of(Task.model_validate(data))
    assert isinstance(CODE[2].truth_of(task), CodeTruth)


def test_a_model_that_takes_its_fields_by_name_is_trusted_despite_aliases(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _same(trusted(ByName, source="a", n=1), ByName(source="a", n=1))
    _same(trusted(ByName, n=1, source="a", note=None), ByName(n=1, source="a", note=None))
    assert truth_mod._TRUSTED[ByName] is not None  # built without validation
    check_trusted(trusted(ByName, source="a", n=1))
    monkeypatch.setattr(truth_mod, "CHECK_TRUSTED", True)
    with pytest.raises(AssertionError):
        trusted(ByName, source="a", n=1.0)  # the check still refuses what validation changes


def test_a_model_that_takes_a_field_by_its_alias_only_is_validated() -> None:
    built = trusted(AliasOnly, n="2")
    assert built.n == 2 and truth_mod._TRUSTED[AliasOnly] is None
    _same(built, AliasOnly(count=2))


class Open(BaseModel):
    """Not frozen: assignment adds to its fields set."""

    a: int
    b: str | None = None
    tags: list[str] = Field(default_factory=list)


def test_builds_given_every_field_share_one_fields_set_that_nothing_changes() -> None:
    """Every field given: one fields set of every name, shared, which every pydantic path
    leaves as it is (it only adds names the set holds, or copies it); a build given some
    fields has a set of its own, which assignment grows as validation's does."""
    for model in (Leaf, Open):
        one = trusted(model, a=1, b="x", tags=[])
        two = trusted(model, tags=["t"], b=None, a=2)  # out of field order
        shared = one.__pydantic_fields_set__
        assert shared is two.__pydantic_fields_set__
        assert type(shared) is set and shared == {"a", "b", "tags"}
        copied = one.model_copy(update={"b": "y"})
        assert copied.model_fields_set == shared and copied.__pydantic_fields_set__ is not shared
        assert one.model_copy(update={"b": "z"}, deep=True).b == "z" and one.b == "x"
        for again in (copy.copy(one), copy.deepcopy(one), pickle.loads(pickle.dumps(one))):
            _same(again, one)
            assert again.__pydantic_fields_set__ is not shared
        written = trusted(model, a=3, b="x", tags=[])
        model.__pydantic_validator__.validate_assignment(written, "b", "w")  # frozen or not
        assert written.b == "w" and written.__pydantic_fields_set__ is shared
        assert one.model_dump(exclude_unset=True) == model(a=1, b="x", tags=[]).model_dump(
            exclude_unset=True
        )
        assert shared == {"a", "b", "tags"} and len(shared) == 3
        assert (one.a, one.b, two.a, two.b) == (1, "x", 2, None)
    opened = trusted(Open, a=1, b=None, tags=[])
    opened.b = "v"  # assignment: a name the shared set holds
    want = Open(a=1, b=None, tags=[])
    want.b = "v"
    _same(opened, want)
    assert opened.__pydantic_fields_set__ is trusted(Open, a=5, b=None, tags=[]).model_fields_set
    part, other = trusted(Open, a=1), trusted(Open, a=2)
    assert part.__pydantic_fields_set__ is not other.__pydantic_fields_set__
    part.b = "q"
    assert part.model_fields_set == {"a", "b"} and other.model_fields_set == {"a"}
    assert trusted(Open, a=3, b=None, tags=[]).model_fields_set == {"a", "b", "tags"}
