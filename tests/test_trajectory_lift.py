"""The writer's lift of a step's token ids and logprobs (``twin.lift_numbers``): it lifts
exactly the lists, with exactly the values and types, that the reference (each list copied
and converted strictly on its own) lifts, and the writer's lines and refusals stay the model
path's: generated lists of exact and hostile numbers (bools, NaN, infinities, ints past 64
bits, int and float subclasses, enums, strings), lists that are list subclasses, tuples or
not lists, and lists changed after the lift or cleared by a finalizer while it copies them.
(Kept from a trial of converting the three lists in one call as one struct's fields:
0.3% fewer instructions an episode, not kept; docs/training.md.)"""

from __future__ import annotations

import math
import random
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gymforge.trajectory import episode_encoding, fast_json, twin
from tests.budget import examples
from tests.test_trajectory_same_json import KEY, _episode
from tests.test_trajectory_twin import _Float, _model_outcome, _outcome, _Plain, _Small

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(fast_json.orjson is None, reason="orjson not installed")


def _reference_lift(
    record: dict[str, Any],
) -> tuple[dict[str, Any], dict[str, list[Any]]] | None:
    """The lift as it was: each list copied and converted on its own."""
    policy = record.get("policy")
    if type(policy) is not dict:
        return None
    lifted: dict[str, list[Any]] = {}
    for name, kind in twin.LIFTABLE.items():
        value = policy.get(name)
        if type(value) is not list or not value:
            continue
        try:
            value = msgspec.convert(value.copy(), list[kind], strict=True)  # type: ignore[valid-type]
        except msgspec.ValidationError:
            continue
        if kind is float and not math.isfinite(sum(value)):
            continue
        lifted[name] = value
    if not lifted:
        return None
    return {**record, "policy": {**policy, **{name: [] for name in lifted}}}, lifted


def _typed(value: Any) -> Any:
    """``value`` with every number's exact type and text: ``==`` tells neither ``1`` from
    ``1.0`` or ``True``, nor ``0.0`` from ``-0.0``."""
    if type(value) is dict:
        return [(k, _typed(v)) for k, v in value.items()]
    if type(value) in (list, tuple):
        return (type(value), [_typed(v) for v in value])
    return (type(value), repr(value))


class _Int(int):
    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return 0


class _List(list):  # type: ignore[type-arg]
    pass


_HOSTILE = st.sampled_from([
    True, False, None, "1", float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 5e-324,
    1e308, 2**63, 2**64, 2**64 - 1, -(2**63) - 1, 10**309, _Small.ONE, _Plain.FIVE,
    _Float(1.5), _Int(7), [1], {"a": 1},
])  # fmt: skip
_NUMBERS = st.one_of(
    st.integers(-3, 300), st.integers(-(2**70), 2**70), st.floats(), st.floats(-30.0, 0.0), _HOSTILE
)
_LIST = st.one_of(
    st.lists(st.integers(0, 2**20), max_size=6),
    st.lists(st.floats(-30.0, 0.0), max_size=6),
    st.lists(_NUMBERS, max_size=6),
    st.lists(st.integers(0, 9), max_size=3).map(_List),
    st.lists(st.integers(0, 9), max_size=3).map(tuple),
    st.none(),
    _HOSTILE,
)


@examples(1500)
def test_the_lift_is_the_reference_lift(examples: int) -> None:
    """Every combination of the three lists: the same lists lifted, the same values of the
    same types, the same rest."""

    @settings(max_examples=examples, deadline=None)
    @given(st.fixed_dictionaries({name: _LIST for name in twin.LIFTABLE}), st.booleans())
    def check(lists: dict[str, Any], drop: bool) -> None:
        policy: dict[str, Any] = {"capture_level": "tokens", **lists}
        if drop:
            policy.pop("logprobs")
        record = {"record": "step", "policy": policy}
        assert _typed(twin.lift_numbers(record)) == _typed(_reference_lift(record))

    check()


@examples(600)
def test_lines_with_generated_lists_are_the_model_paths(examples: int) -> None:
    """The writer's lines (or refusal) for a step whose lists are generated, hostile values
    among them, are the model path's, sealed or not."""

    @settings(max_examples=examples, deadline=None)
    @given(
        st.fixed_dictionaries({name: _LIST for name in twin.LIFTABLE}), st.sampled_from([None, KEY])
    )
    def check(lists: dict[str, Any], key: bytes | None) -> None:
        step, end = _episode(random.Random(5))
        step["policy"].update(lists)
        with pytest.MonkeyPatch.context() as monkeypatch:
            assert _outcome([step, end], key) == _model_outcome([step, end], key, monkeypatch)

    check()


def test_the_lifted_lists_are_copies_the_record_cannot_change() -> None:
    """The lifted lists are new lists: the policy's own, changed after the lift, change
    neither them nor the line written from them."""
    ids, logprobs = [1, 2, 3], [-0.5, -1.5]
    record = {
        "policy": {"prompt_token_ids": ids, "completion_token_ids": ids, "logprobs": logprobs}
    }
    lift = twin.lift_numbers(record)
    assert lift is not None
    rest, lifted = lift
    assert all(lifted[name] is not record["policy"][name] for name in lifted)
    ids[0] = "x"
    logprobs.clear()
    assert lifted == {
        "prompt_token_ids": [1, 2, 3],
        "completion_token_ids": [1, 2, 3],
        "logprobs": [-0.5, -1.5],
    }
    assert rest["policy"] == {"prompt_token_ids": [], "completion_token_ids": [], "logprobs": []}


@pytest.mark.parametrize("key", [None, KEY], ids=["unsealed", "sealed"])
def test_one_refused_list_leaves_the_others_lifted(key: bytes | None) -> None:
    """A bool among the token ids keeps that list in the record: the other lists are still
    lifted, and the line is the model path's."""
    step, end = _episode(random.Random(5))
    step["policy"].update(prompt_token_ids=[1, True], completion_token_ids=[3], logprobs=[-0.5])
    marked = {**step, "policy": {**episode_encoding._POLICY_UNSET, **step["policy"]}}
    lift = twin.lift_numbers(marked)
    assert lift is not None and sorted(lift[1]) == ["completion_token_ids", "logprobs"]
    with pytest.MonkeyPatch.context() as monkeypatch:
        outcome = _outcome([step, end], key)
        assert outcome == _model_outcome([step, end], key, monkeypatch)
    assert isinstance(outcome, list)  # written (the models read the bool as the int 1)


_COPY_SCRIPT = textwrap.dedent(
    """
    import gc
    from gymforge.trajectory import twin

    victim = list(range(1000, 1064))
    alive = []


    class Finalizer:  # garbage in a cycle: the collector runs its finalizer at an allocation
        def __init__(self):
            self.me = self

        def __del__(self):
            victim.clear()  # the policy reuses its buffer: the item array is freed
            alive.append([10**6 + i for i in range(64)])  # and its memory reused


    for t in range(1, 40):  # a collection at each allocation in turn
        victim[:] = range(1000, 1064)
        policy = {"prompt_token_ids": victim}
        gc.collect()
        alive.append([[0] for _ in range(200)])  # the free list of lists emptied, none freed
        Finalizer()
        gc.set_threshold(t)
        try:
            lift = twin.lift_numbers({"policy": policy})
        finally:
            gc.set_threshold(700, 10, 10)
        got = [] if lift is None else lift[1]["prompt_token_ids"]
        assert got in ([], list(range(1000, 1064))), (t, got[:3])
    print("ok")
    """
)


def test_a_list_cleared_by_a_finalizer_while_the_lift_copies_it_never_crashes() -> None:
    """The copy's one allocation that can start a collection comes before it reads the
    list (``list(value)``): a finalizer clearing the list there leaves the lift the list as
    it was or as it became. (``value.copy()`` reads the size, allocates, then reads the
    items through that size: outside the writer, with the free list of lists emptied, a
    finalizer clearing the list at that allocation crashes the interpreter, and
    tests/redteam/test_fast_paths_red10.py's finalizer run crashed so once the lift kept
    its copies alive together.)"""
    run = subprocess.run(
        [sys.executable, "-c", _COPY_SCRIPT],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0 and run.stdout.strip() == "ok", (run.returncode, run.stderr[-500:])
