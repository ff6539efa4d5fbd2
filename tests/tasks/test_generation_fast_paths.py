"""The shortcuts of task generation, each held equal to the path it stands for: a knob's
draw and ``tasks.draws`` against ``randint`` and ``choice``, the memoised difficulty against
``difficulty``, the kept seed prefix against ``derive_seed``, the shared parse of the last
task id against a fresh parse, the inline dump of many small models against pydantic's, the
puzzle family found for a generated task against ``for_task``, and ``task_of`` against the
validating ``Task`` constructor."""

from __future__ import annotations

import dataclasses
import random
import warnings
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

from gymforge.core.seeding import derive_seed, seed_of_canonical
from gymforge.core.types import Task, task_of
from gymforge.envs.puzzles.families import BY_NAME, FAMILIES, family_of
from gymforge.tasks import ChoiceKnob, IntKnob, ParamSpace, TaskFamily, draws
from gymforge.tasks.task_id import TaskId, _parse_task_id, parse_task_id
from gymforge.tasks.truth import AnswerTruth
from gymforge.tasks.truth_dump import dump_truth
from gymforge.verify.puzzles.base import RowMark
from tests.budget import examples


@given(st.integers(-(10**12), 10**12), st.integers(0, 10**12), st.integers(0, 2**64))
def test_an_int_knob_draws_what_randint_draws(lo: int, width: int, seed: int) -> None:
    knob = IntKnob(lo, lo + width)
    a, b = random.Random(seed), random.Random(seed)
    assert [knob.sample(a) for _ in range(5)] == [b.randint(lo, lo + width) for _ in range(5)]
    assert a.random() == b.random()  # the same state after


@given(st.integers(-(10**12), 10**12), st.integers(-3, 10**12), st.integers(0, 2**64))
def test_the_randint_draw_is_randint(lo: int, width: int, seed: int) -> None:
    """Draw for draw, with the same state after; an empty range raises as ``randint``."""
    a, b = random.Random(seed), random.Random(seed)
    try:
        want = [b.randint(lo, lo + width) for _ in range(5)]
    except ValueError:
        with pytest.raises(ValueError):
            draws.randint(a, lo, lo + width)
        return
    assert [draws.randint(a, lo, lo + width) for _ in range(5)] == want
    assert a.getstate() == b.getstate()


@given(st.lists(st.integers() | st.text(max_size=2), max_size=40), st.integers(0, 2**64))
def test_the_choice_draw_is_choice(values: list[Any], seed: int) -> None:
    for seq in (values, tuple(values), "".join(map(str, values))):
        a, b = random.Random(seed), random.Random(seed)
        if not seq:
            with pytest.raises(IndexError):
                draws.choice(a, seq)
            continue
        assert [draws.choice(a, seq) for _ in range(5)] == [b.choice(seq) for _ in range(5)]
        assert a.getstate() == b.getstate()


@pytest.mark.parametrize("inline", [True, False])
@given(st.integers(-(10**6), 10**6), st.integers(0, 2**70), st.integers(0, 2**64))
def test_both_draws_of_randbelow_are_randbelow(
    inline: bool, lo: int, width: int, seed: int
) -> None:
    """The inline draw (this Python's ``_randbelow``, checked at import) and the call of
    ``_randbelow`` itself give ``randint`` and ``choice``'s draws, state included."""
    assert draws._INLINE  # this Python draws as the inline copy does
    saved = draws._INLINE
    draws._INLINE = inline
    try:
        a, b = random.Random(seed), random.Random(seed)
        got = [draws.randint(a, lo, lo + width) for _ in range(4)]
        seq = list(range(width % 50 + 1))
        got += [draws.choice(a, seq) for _ in range(4)]
        want = [b.randint(lo, lo + width) for _ in range(4)] + [b.choice(seq) for _ in range(4)]
        assert got == want and a.getstate() == b.getstate()
    finally:
        draws._INLINE = saved


def test_the_inline_draw_is_refused_for_another_randbelow(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a Python whose ``_randbelow`` draws otherwise, the import-time check says so."""

    def other(self: random.Random, n: int) -> int:
        return int(self.random() * n)

    monkeypatch.setattr(random.Random, "_randbelow", other)
    assert not draws._inline_is_randbelow()
    monkeypatch.undo()
    assert draws._inline_is_randbelow()


def test_draws_from_a_random_subclass_or_of_other_types_take_its_methods() -> None:
    class Counting(random.Random):
        calls = 0

        def randint(self, a: int, b: int) -> int:
            self.calls += 1
            return super().randint(a, b)

        def choice(self, seq: Any) -> Any:
            self.calls += 1
            return super().choice(seq)

    r = Counting(1)
    draws.randint(r, 0, 9)
    draws.choice(r, [1, 2])
    assert r.calls == 2


@pytest.mark.parametrize("lo, hi", [(0, 9.5), (0.0, 3.0), (False, True), (2, 1), (10**30, 10**31)])
def test_draws_of_other_bounds_are_randint(lo: Any, hi: Any) -> None:
    """Refused, or drawn, as ``randint`` does it."""

    def outcome(draw: Any, r: random.Random) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # randint's deprecation of float bounds too
            try:
                return draw(), r.getstate()
            except Exception as err:  # the same refusal
                return type(err)

    a, b = random.Random(3), random.Random(3)
    assert outcome(lambda: draws.randint(a, lo, hi), a) == outcome(lambda: b.randint(lo, hi), b)


def test_an_int_knob_with_a_random_subclass_uses_randint() -> None:
    class Counting(random.Random):
        calls = 0

        def randint(self, a: int, b: int) -> int:
            self.calls += 1
            return super().randint(a, b)

    r = Counting(1)
    IntKnob(0, 9).sample(r)
    assert r.calls == 1


class Pick(TaskFamily[AnswerTruth]):
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, AnswerTruth]:
        return "q", AnswerTruth(answer=str(params))


LEVELS = {
    1: ParamSpace({"n": IntKnob(0, 4), "k": ChoiceKnob(("a", "b", None, 1))}),
    2: ParamSpace({"n": IntKnob(0, 9), "k": ChoiceKnob(("a", "b", None, 1, True))}),
}


@given(
    st.integers(-2, 11),
    st.sampled_from(["a", "b", "c", None, 1, True, 1.0, False, 0]),
)
def test_the_memoised_difficulty_is_difficulty(n: int, k: Any) -> None:
    """Keyed with each value's type: ``True`` and ``1`` (equal, same hash) stay apart."""
    family = Pick("pick", 1, LEVELS)
    params = {"n": n, "k": k}
    items = sorted(params.items())
    try:
        want: int | None = family.difficulty(params)
    except ValueError:
        want = None
    for _ in range(2):  # the miss, then the hit
        if want is None:
            with pytest.raises(ValueError):
                family._known(params, items)[0]
        else:
            assert family._known(params, items)[0] == want


def test_the_difficulty_memo_follows_new_levels() -> None:
    family = Pick("pick", 1, LEVELS)
    params = {"n": 7, "k": "a"}
    assert family._known(params, sorted(params.items()))[0] == 2
    family.levels = {3: LEVELS[2]}
    assert family._known(params, sorted(params.items()))[0] == 3


scalars = st.none() | st.booleans() | st.integers() | st.text(st.characters(codec="utf-8"))


@examples(300)
def test_the_kept_seed_prefix_writes_derive_seed(examples: int) -> None:
    """``_generate`` seeds its build from ``prefix + seed``: what ``derive_seed`` hashes."""

    @settings(max_examples=examples)
    @given(
        st.text(st.characters(codec="utf-8")),
        st.integers() | st.booleans() | st.text(max_size=3),
        st.dictionaries(st.text(st.characters(codec="utf-8"), max_size=4), scalars, max_size=4),
        st.integers(),
    )
    def check(name: str, version: Any, params: dict[str, Any], seed: int) -> None:
        family = Pick(
            name, version, {1: ParamSpace({k: ChoiceKnob((v,)) for k, v in params.items()})}
        )
        items = sorted(params.items())
        for _ in range(2):  # the miss, then the hit
            level, prefix = family._known(params, items)
            assert level == 1 and prefix is not None
            want = derive_seed(name, version, items, seed)
            assert seed_of_canonical(f"{prefix}{seed}]") == want

    check()


def test_the_kept_seed_prefix_follows_the_name_and_version() -> None:
    family = Pick("pick", 1, LEVELS)
    params = {"n": 3, "k": "a"}
    items = sorted(params.items())
    for name, version in (("pick", 1), ("other", 1), ("other", True), ("other", 1)):
        family.name, family.version = name, version
        prefix = family._known(params, items)[1]
        assert seed_of_canonical(f"{prefix}7]") == derive_seed(name, version, items, 7)


class Drawn(TaskFamily[AnswerTruth]):
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, AnswerTruth]:
        return "q", AnswerTruth(answer=repr(r.random()))


@pytest.mark.parametrize("x", [0.5, 1, True, "a", None])
def test_tasks_are_built_from_the_derived_seed(x: Any) -> None:
    """Drawn, or given as params of other values (a float: no memo, no prefix)."""
    family = Drawn("drawn", 3, {1: ParamSpace({"x": ChoiceKnob((0.5, 1, True, "a", None))})})
    assert (family._known({"x": x}, [("x", x)])[1] is None) == (type(x) is float)
    for seed in (0, 5, 2**70):
        for task in (family.generate({"x": x}, seed), family.task(1, seed)):
            items = sorted(task.params.items())
            r = random.Random(derive_seed("drawn", 3, items, seed))
            assert task.truth == {"answer": repr(r.random())}


def test_generated_tasks_are_unchanged_by_the_memo() -> None:
    family = Pick("pick", 1, LEVELS)
    for seed in range(30):
        for level in (1, 2):
            task = family.task(level, seed)
            fresh = Pick("pick", 1, LEVELS).task(level, seed)
            assert task == fresh and task.difficulty == family.difficulty(task.params)


@pytest.mark.parametrize(
    "task_id",
    [
        "fam/v1/d2/s3",
        "math.arith/v2/d3/s999999999",
        'a-b.c/v0/d0/s0/n=1,k="x"',
        "f/v9/d1/s2/k=null",
    ],
)
def test_a_parsed_task_id_is_the_one_its_constructor_makes(task_id: str) -> None:
    """Equal, with the same fields in the same order and nothing else; a field added to
    ``TaskId`` (or a ``__post_init__``) fails here until the parse builds it too."""
    tid = _parse_task_id(task_id)
    made = TaskId(tid.family, tid.version, tid.difficulty, tid.seed, tid.params)
    assert type(tid) is TaskId and tid == made
    if tid.params is None:  # hashable, as the constructor's
        assert hash(tid) == hash(made)
    assert vars(tid) == vars(made) and list(vars(tid)) == list(vars(made))
    assert list(vars(made)) == [f.name for f in dataclasses.fields(TaskId)]
    assert not hasattr(TaskId, "__post_init__")
    assert repr(tid) == repr(made) and str(tid) == str(made)
    with pytest.raises(dataclasses.FrozenInstanceError):
        tid.seed = 1  # type: ignore[misc]


def test_the_last_parsed_id_is_shared_only_without_params() -> None:
    plain = "fam/v1/d2/s3"
    assert parse_task_id(plain) is parse_task_id(plain)
    assert parse_task_id(plain) == _parse_task_id(plain)
    with_params = "fam/v1/d2/s3/n=1"
    first, again = parse_task_id(with_params), parse_task_id(with_params)
    assert first == again and first is not again and first.params is not again.params
    assert parse_task_id("fam/v2/d2/s3").version == 2


class Leaf(BaseModel):
    model_config = ConfigDict(frozen=True)

    a: int
    b: str | None = None


class Tree(BaseModel):
    model_config = ConfigDict(frozen=True)

    leaves: list[Leaf]
    keyed: dict[str, Leaf]
    kids: list[Tree] = []


class SubLeaf(Leaf):
    c: int = 0


@given(
    st.lists(st.tuples(st.integers(), st.none() | st.text(max_size=3), st.integers(0, 2))),
)
def test_many_small_models_dump_exactly_as_model_dump(spec: list[tuple[int, Any, int]]) -> None:
    """Each leaf: both fields set, ``b`` left unset, or a subclass instance."""

    def leaf(a: int, b: Any, how: int) -> Leaf:
        return (Leaf(a=a, b=b), Leaf(a=a), SubLeaf(a=a, b=b, c=1))[how]

    leaves = [leaf(*s) for s in spec]
    tree = Tree(
        leaves=leaves,
        keyed={str(i): v for i, v in enumerate(leaves)},
        kids=[Tree(leaves=leaves[:2], keyed={})],
    )
    assert dump_truth(tree) == tree.model_dump(by_alias=True, exclude_unset=True)


def test_the_family_of_a_generated_puzzle_is_the_one_for_task_finds() -> None:
    for family in FAMILIES:
        for version in sorted({family.version, *family.older}):
            at = family.at_version(version)
            for level in sorted(at.levels):
                task = at.task(level, 4)
                assert RowMark.model_validate(task.truth).row_family is None
                assert family_of(task) is BY_NAME[task.family].for_task(task) is at
    row = Task(
        task_id="rows@abc/0",
        family="puzzles.rows",
        prompt="q",
        truth={"row_family": "puzzles.sudoku", "grid": []},
    )
    assert family_of(row) is BY_NAME["puzzles.sudoku"]


def test_expense_decisions_are_validated_as_dicts_exactly_as_they_were_as_models() -> None:
    from pydantic import ValidationError

    from gymforge.envs.expenses.scenarios import FAMILIES as EXPENSES
    from gymforge.envs.expenses.truth import ExpenseTruth

    family = EXPENSES[0]
    task = family.task(min(family.levels), 3)
    truth = ExpenseTruth.model_validate(task.truth)
    assert truth == family.truth_of(task) and dump_truth(truth) == task.truth
    rid = next(iter(task.truth["decisions"]))
    good = task.truth["decisions"][rid]
    for bad in (
        {**good, "extra": 1},
        {**good, "decision": "pay"},
        {k: v for k, v in good.items() if k != "usd"},
        {**good, "usd": "lots"},
    ):
        raw = {**task.truth, "decisions": {**task.truth["decisions"], rid: bad}}
        with pytest.raises(ValidationError):
            ExpenseTruth.model_validate(raw)


def test_support_effects_and_identity_are_validated_as_dicts_exactly_as_they_were_as_models() -> (
    None
):
    from pydantic import ValidationError

    from gymforge.envs.support_desk.families import FAMILIES as SUPPORT
    from gymforge.envs.support_desk.truth import DeskTruth

    family = next(f for f in SUPPORT if f.name == "support.multi_issue")
    task = next(
        t
        for t in (family.task(max(family.levels), s) for s in range(50))
        if any(i.get("refund") for i in t.truth["issues"])
        and any(i.get("credit") or i.get("escalation") for i in t.truth["issues"])
    )
    truth = DeskTruth.model_validate(task.truth)
    assert truth == family.truth_of(task) and dump_truth(truth) == task.truth
    n, issue = next((n, i) for n, i in enumerate(task.truth["issues"]) if i.get("refund"))
    refund = issue["refund"]
    for bad in (
        {**refund, "extra": 1},
        {k: v for k, v in refund.items() if k != "method_id"},
        {**refund, "amount_cents": "lots"},
    ):
        issues = list(task.truth["issues"])
        issues[n] = {**issue, "refund": bad}
        with pytest.raises(ValidationError):
            DeskTruth.model_validate({**task.truth, "issues": issues})
    ident = task.truth["identity"]
    for bad_ident in (
        {**ident, "extra": 1},
        {**ident, "valid": "maybe"},
        {k: v for k, v in ident.items() if k != "zip"},
    ):
        with pytest.raises(ValidationError):
            DeskTruth.model_validate({**task.truth, "identity": bad_ident})
    slots = task.truth["persona"]["slots"]
    plain = {k: v for k, v in slots[0].items() if k != "say"}  # no say: as before, accepted
    persona = {**task.truth["persona"], "slots": [plain, *slots[1:]]}
    again = DeskTruth.model_validate({**task.truth, "persona": persona})
    assert dump_truth(again)["persona"]["slots"][0] == plain
    for bad_slot in ({**slots[0], "extra": 1}, {**slots[0], "keywords": "zip"}, plain | {"say": 1}):
        persona = {**task.truth["persona"], "slots": [bad_slot, *slots[1:]]}
        with pytest.raises(ValidationError):
            DeskTruth.model_validate({**task.truth, "persona": persona})
    kept = {k: v for k, v in issue.items() if k != "refund"}  # no refund: None, as before
    again = DeskTruth.model_validate({**task.truth, "issues": [kept]})
    assert dump_truth(again)["issues"] == [kept]
    for bad_issue in (
        {**issue, "extra": 1},
        {k: v for k, v in issue.items() if k != "code"},
        {**issue, "kind": 3},
        {**issue, "payment_id": 7},
        {**issue, "refund": "yes"},
    ):
        with pytest.raises(ValidationError):
            DeskTruth.model_validate({**task.truth, "issues": [bad_issue]})


class Name(str):
    """A ``str`` subclass: validation turns it into a plain ``str``."""


class Plain(dict):  # type: ignore[type-arg]
    """A ``dict`` subclass: validation turns it into a plain ``dict``."""


_TEXT = st.text(max_size=4) | st.builds(Name, st.text(max_size=3))
_JSONISH = st.none() | st.booleans() | st.integers() | st.text(max_size=3) | st.lists(st.integers())
_DICTS = st.dictionaries(_TEXT | st.integers(), _JSONISH, max_size=4)


@given(
    texts=st.tuples(_TEXT, _TEXT, _TEXT | st.integers()),
    truth=_DICTS | _DICTS.map(Plain) | st.none(),
    params=_DICTS | _DICTS.map(Plain),
    difficulty=st.integers() | st.booleans() | st.floats(-3, 3) | st.text(max_size=2),
)
def test_task_of_is_the_validating_constructor(
    texts: tuple[Any, Any, Any], truth: Any, params: Any, difficulty: Any
) -> None:
    task_id, family, prompt = texts
    fields = dict(task_id=task_id, family=family, prompt=prompt, truth=truth, params=params)
    try:
        want = Task(**fields, difficulty=difficulty)
    except ValueError as err:
        with pytest.raises(type(err)):
            task_of(task_id, family, prompt, truth, params, difficulty)
        return
    got = task_of(task_id, family, prompt, truth, params, difficulty)
    assert type(got) is Task
    assert list(got.__dict__.items()) == list(want.__dict__.items())
    assert [type(v) for v in got.__dict__.values()] == [type(v) for v in want.__dict__.values()]
    assert [type(k) for k in got.truth] == [type(k) for k in want.truth]
    assert [type(k) for k in got.params] == [type(k) for k in want.params]
    assert got.model_fields_set == want.model_fields_set
    assert (got.__pydantic_extra__, got.__pydantic_private__) == (None, None)
    assert got.model_dump_json() == want.model_dump_json()
    assert got.truth is not truth and got.params is not params  # copies, as validation makes


class Flat(BaseModel):
    """A truth of plain fields only, most of them optional (``MathTruth``'s shape)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    answer: str
    form: str | None = None
    tol: float | None = None
    note: str | None = None


@given(st.fixed_dictionaries({"answer": st.text(max_size=3)}, optional={
    "form": st.none() | st.text(max_size=2), "tol": st.none() | st.floats(0, 1),
    "note": st.none() | st.text(max_size=2)}))  # fmt: skip
def test_a_flat_truth_with_fields_unset_dumps_as_model_dump(values: dict[str, Any]) -> None:
    """Only the fields set, in field order, whichever were given and in whatever order."""
    for given_order in (values, dict(reversed(values.items()))):
        truth = Flat(**given_order)
        want = truth.model_dump(by_alias=True, exclude_unset=True)
        assert list(dump_truth(truth).items()) == list(want.items())
