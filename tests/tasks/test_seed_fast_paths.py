"""A family's params seed, written as canonical JSON, is ``derive_seed`` of the same parts."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gymforge.core.seeding import canonical_json, derive_seed, seed_of_canonical, seeded
from gymforge.envs.math.env import MODULES
from gymforge.tasks import IntKnob, ParamSpace, TaskFamily
from gymforge.tasks.truth import AnswerTruth
from tests.budget import examples


class Echo(TaskFamily[AnswerTruth]):
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, AnswerTruth]:
        return "q", AnswerTruth(answer=str(params))


@given(st.lists(st.none() | st.booleans() | st.integers() | st.text(), max_size=5))
def test_seed_of_canonical_is_derive_seed(parts: list[Any]) -> None:
    assert seed_of_canonical(canonical_json(parts)) == derive_seed(*parts)


@examples(400)
def test_the_params_seed_is_derive_seed(examples: int) -> None:
    @settings(max_examples=examples)
    @given(
        st.text(st.characters(codec=None)),
        st.integers() | st.text(max_size=3),
        st.integers(),
        st.integers(),
    )
    def check(name: str, version: Any, level: int, seed: int) -> None:
        family = Echo(name, version, {level: ParamSpace({"n": IntKnob(0, 9)})})
        try:
            want = derive_seed(name, version, level, seed, "params")
        except UnicodeEncodeError:  # a lone surrogate in the name: both refuse it alike
            with pytest.raises(UnicodeEncodeError):
                family._params_seed(level, seed)
            return
        assert family._params_seed(level, seed) == want
        assert family._params_seed(level, seed) == want  # from the kept prefix
        assert family.params_for(level, seed) == family.levels[level].sample(random.Random(want))

    check()


def test_a_renamed_family_writes_its_new_prefix() -> None:
    family = Echo("a", 1, {1: ParamSpace({"n": IntKnob(0, 9)})})
    family._params_seed(1, 5)
    family.name, family.version = "b", 2
    assert family._params_seed(1, 5) == derive_seed("b", 2, 1, 5, "params")


def test_non_int_parts_take_the_defining_path() -> None:
    family = Echo("a", 1, {True: ParamSpace({"n": IntKnob(0, 9)})})
    assert family._params_seed(True, 5) == derive_seed("a", 1, True, 5, "params")
    assert family._params_seed(1, False) == derive_seed("a", 1, 1, False, "params")


def test_math_tasks_are_generated_as_before() -> None:
    for module in MODULES:
        family = module.FAMILY
        for level in family.levels:
            for seed in (0, 1, 977, 10**9 - 1):
                r = random.Random(derive_seed(family.name, family.version, level, seed, "params"))
                assert family.params_for(level, seed) == family.levels[level].sample(r)


@settings(max_examples=300)
@given(st.integers(min_value=-(2**80), max_value=2**80))
def test_seeded_is_random_random(seed: int) -> None:
    want, got = random.Random(seed), seeded(seed)
    assert type(got) is random.Random
    assert got.getstate() == want.getstate()
    assert vars(got) == vars(want)
    assert [got.random() for _ in range(3)] == [want.random() for _ in range(3)]
    assert got.gauss(0, 1) == want.gauss(0, 1)
    assert got.getstate() == want.getstate()  # gauss keeps its second draw alike


@pytest.mark.parametrize("seed", ["s", b"s", 1.5, True])
def test_seeded_hands_other_seeds_to_random_random(seed: Any) -> None:
    assert seeded(seed).getstate() == random.Random(seed).getstate()
