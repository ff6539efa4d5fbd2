"""Red team: today's fast paths against the reference paths they stand for.

- The writer's lift of a step's token ids and logprobs (``twin.lift_numbers``), a strict
  conversion in C: whatever a policy puts in those lists (or does to them meanwhile), the
  lines written or the error raised are the model path's for one reading of the record.
- ``task_of``, ``verdict_of``, ``Verdict.split_timing`` and ``math_truth``, which build models
  without validation when every value is exactly its declared type: indistinguishable from
  the validating constructor, and anything else still validated.
- ``TaskSource``'s kept ``heldout`` copies: never served by the wrong source, never stale
  after the family's task is dropped and regenerated, under threads too.
"""

from __future__ import annotations

import copy
import enum
import gc
import pickle
import random
import subprocess
import sys
import textwrap
import threading
import weakref
from pathlib import Path
from typing import Any

import pytest

from gymforge.core.errors import IntegrityError
from gymforge.core.types import Task, task_of
from gymforge.core.verdict import TIMING_FACTS, Verdict, verdict_of
from gymforge.envs.math.truth import MathTruth, math_truth
from gymforge.trajectory import fast_json, twin
from gymforge.trajectory.episode_encoding import seal_lines
from gymforge.trajectory.seal import ChainState
from tests.test_trajectory_same_json import KEY, _episode
from tests.test_trajectory_twin import _model_outcome, _outcome

ROOT = Path(__file__).resolve().parents[2]


# ---- 1. the lift of a step's number lists ----------------------------------------------


class _LyingInt(int):
    """Every way of reading it as a number but ``int``'s own says something else."""

    def __int__(self) -> int:
        return 99

    def __index__(self) -> int:
        return 98

    def __repr__(self) -> str:
        return "97"

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return 0


class _LyingFloat(float):
    def __repr__(self) -> str:
        return "0.25"

    def __float__(self) -> float:
        return 0.125


class _Flag(enum.IntFlag):
    A = 1
    B = 2


class _IntMixin(int, enum.Enum):
    Y = 8


def _odd_numbers() -> dict[str, Any]:
    odd: dict[str, Any] = {
        "lying int": _LyingInt(5),
        "IntFlag combination": _Flag.A | _Flag.B,
        "IntFlag zero": _Flag(0),
        "int-mixin Enum": _IntMixin.Y,
        "lying float": _LyingFloat(-0.5),
        "2**63": 2**63,
        "2**64-1": 2**64 - 1,
        "2**64-3 (rounds as a float)": 2**64 - 3,
        "2**63+1025 (a float tie)": 2**63 + 1025,
        "2**53+1": 2**53 + 1,
        "-(2**63)-1": -(2**63) - 1,
        "10**309 (no float)": 10**309,
    }
    try:
        import numpy as np
    except ImportError:
        return odd
    odd.update({
        "numpy int64": np.int64(3),
        "numpy float64": np.float64(-0.5),
        "numpy float32": np.float32(-0.5),
        "numpy float64 nan": np.float64("nan"),
    })  # fmt: skip
    return odd


ODD = _odd_numbers()


@pytest.mark.parametrize("key", [None, KEY], ids=["unsealed", "sealed"])
@pytest.mark.parametrize("name", sorted(twin.LIFTABLE))
@pytest.mark.parametrize("label", sorted(ODD))
def test_odd_numbers_in_the_lifted_lists_are_written_as_the_model_path_writes_them(
    label: str, name: str, key: bytes | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Int subclasses that lie through every protocol but ``int``'s own value, flags, numpy
    scalars and ints a float rounds: the lift's copy is what ``json`` writes and the models
    validate, so the line (or the refusal) is the model path's."""
    step, end = _episode(random.Random(5))
    policy = step["policy"]
    policy.update(prompt_token_ids=[1, 2], completion_token_ids=[3, 4], logprobs=[-0.5, -1.5])
    policy[name][1] = ODD[label]
    assert _outcome([step, end], key) == _model_outcome([step, end], key, monkeypatch)


@pytest.mark.parametrize("where", ["reward", "logprobs"])
def test_an_int_past_the_float_range_in_a_float_field_is_an_integrity_error(where: str) -> None:
    """A reward (an environment's ``2**2000``) or a logprob that no float holds is refused
    as a record that is not JSON, with the writer's IntegrityError, as NaN is."""
    step, end = _episode(random.Random(5))
    if where == "reward":
        step["reward"] = 10**309
    else:
        step["policy"].update(prompt_token_ids=[1], completion_token_ids=[2], logprobs=[10**309])
    with pytest.raises(IntegrityError):
        seal_lines(copy.deepcopy([step, end]), None, ChainState())


_FINALIZER_SCRIPT = textwrap.dedent(
    """
    import gc, json, random
    from gymforge.core.errors import IntegrityError
    from gymforge.trajectory.episode_encoding import seal_lines
    from gymforge.trajectory.seal import ChainState
    from tests.test_trajectory_same_json import _episode

    N = 64
    ORIGINAL = list(range(1000, 1000 + N))


    class Finalizer:
        # garbage in a cycle: the collector runs its finalizer at some allocation
        def __init__(self, victim, keep):
            self.me, self.victim, self.keep = self, victim, keep

        def __del__(self):
            self.victim.clear()  # the policy reuses its buffer: the item array is freed
            self.keep.append([10**6 + i for i in range(N)])  # and its memory reused


    for t in range(1, 200):  # a collection at each allocation in turn
        step, end = _episode(random.Random(5))
        policy = step["policy"]
        policy.update(prompt_token_ids=list(ORIGINAL), completion_token_ids=[3, 4],
                      logprobs=[-0.5, -1.5])
        keep = []
        gc.collect()
        gc.set_threshold(t)
        try:
            Finalizer(policy["prompt_token_ids"], keep)
            try:
                lines = seal_lines([step, end], None, ChainState())
            except IntegrityError:
                continue
        finally:
            gc.set_threshold(700, 10, 10)
        written = json.loads(lines[0])["policy"]["prompt_token_ids"]
        if written not in ([], ORIGINAL):
            print("FORGED", t, written[:4])
            raise SystemExit(3)
    print("ok")
    """
)


@pytest.mark.skipif(fast_json.orjson_bytes({}) is None, reason="orjson not installed")
def test_a_list_cleared_while_the_lift_copies_it_is_written_as_one_reading_of_it() -> None:
    """A policy that reuses its token-id buffer clears it from a finalizer (or from a
    thread the finalizer lets run) while the writer lifts it. The model path and the lift
    before it (``list(value)``, which allocates before it reads the list, then reads its
    size and items at once) write the list as it was or as it became; nothing else, and the
    writer never crashes. (A lift copying with ``list.copy``, which reads the size, then
    allocates, then reads the items through that size, crashed here once its allocation
    was not served from the free list of lists.)"""
    run = subprocess.run(
        [sys.executable, "-c", _FINALIZER_SCRIPT],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0 and run.stdout.strip() == "ok", (run.returncode, run.stdout[-300:])


# ---- 2. models built without validation ------------------------------------------------


class _S(str):
    pass


class _FormEnum(str, enum.Enum):  # noqa: UP042 - the mixin is the attack
    INTEGER = "integer"


class _D(dict):  # type: ignore[type-arg]
    pass


def _signature(model: Any) -> dict[str, Any]:
    """Everything a caller can observe of a model, each as its value or its error."""
    probes = {
        "eq": lambda m: m,
        "dump": lambda m: m.model_dump(),
        "dump_json": lambda m: m.model_dump_json(),
        "dump_unset": lambda m: m.model_dump(exclude_unset=True),
        "fields_set": lambda m: m.model_fields_set,
        "repr": repr,
        "items": lambda m: [(k, type(v), v) for k, v in m.__dict__.items()],
        "private": lambda m: m.__pydantic_private__,
        "extra": lambda m: m.__pydantic_extra__,
        "pickle": lambda m: pickle.loads(pickle.dumps(m)).__getstate__(),
        "deepcopy": lambda m: copy.deepcopy(m).__getstate__(),
        "copy": lambda m: m.model_copy(update={}).__getstate__(),
        "round_trip": lambda m: type(m).model_validate(m.model_dump()) == m,
        "round_trip_json": lambda m: type(m).model_validate_json(m.model_dump_json()) == m,
        "hash": hash,
        "assign": lambda m: setattr(m, next(iter(type(m).model_fields)), "x"),
        "delete": lambda m: delattr(m, next(iter(type(m).model_fields))),
        "new_attr": lambda m: setattr(m, "zz", 1),
    }
    out: dict[str, Any] = {}
    for name, probe in probes.items():
        try:
            out[name] = ("value", probe(model))
        except Exception as err:  # the error is the observation
            out[name] = ("error", type(err).__name__, str(err))
    return out


def _same(fast: Any, reference: Any) -> None:
    outcomes = []
    for make in (fast, reference):
        try:
            outcomes.append(("model", make()))
        except Exception as err:
            outcomes.append(("error", type(err), str(err)))
    (fk, f, *frest), (rk, r, *rrest) = outcomes
    assert (fk, *([type(f)] if fk == "model" else [f, *frest])) == (
        rk,
        *([type(r)] if rk == "model" else [r, *rrest]),
    )
    if fk == "model":
        assert _signature(f) == _signature(r)


TASK_ARGS: dict[str, tuple[Any, ...]] = {
    "plain": ("m/1", "m", "p", {"answer": "1"}, {"n": 1, "l": [1, 2]}, 3),
    "lone surrogates": ("m/\ud800", "m", "\udfff", {"a": "\ud800"}, {}, 0),
    "NUL": ("t\x00", "f", "p\x00", {"\x00": None}, {}, 0),
    "huge difficulty": ("t", "f", "p", {}, {}, 2**200),
    "bool difficulty": ("t", "f", "p", {}, {}, True),
    "float difficulty": ("t", "f", "p", {}, {}, 1.0),
    "str subclass id": (_S("t"), "f", "p", {}, {}, 0),
    "str subclass truth key": ("t", "f", "p", {_S("a"): 1}, {}, 0),
    "int truth key": ("t", "f", "p", {1: 1}, {}, 0),
    "int params key": ("t", "f", "p", {}, {2: 1}, 0),
    "dict subclass truth": ("t", "f", "p", _D(a=1), {}, 0),
}


@pytest.mark.parametrize("label", sorted(TASK_ARGS))
def test_task_of_is_the_validated_task(label: str) -> None:
    a = TASK_ARGS[label]
    _same(
        lambda: task_of(*a),
        lambda: Task(
            task_id=a[0], family=a[1], prompt=a[2], truth=a[3], params=a[4], difficulty=a[5]
        ),
    )


VERDICT_ARGS: dict[str, tuple[Any, ...]] = {
    "plain": (True, None, {"a": 1}, "v"),
    "timing": (False, "wrong", {"latency_ms": 1.5, "x": [1]}, "v"),
    "lone surrogates": (False, "\ud800", {"\udfff": 1}, "v\ud800"),
    "str subclass reason": (False, _S("wrong"), {}, "v"),
    "str subclass key": (False, None, {_S("latency_ms"): 1}, "v"),
    "int passed": (1, None, {}, "v"),
    "str passed": ("yes", None, {}, "v"),
    "int key": (True, None, {1: 2}, "v"),
    "dict subclass facts": (True, None, _D(a=1), "v"),
}


@pytest.mark.parametrize("label", sorted(VERDICT_ARGS))
def test_verdict_of_is_the_validated_verdict(label: str) -> None:
    a = VERDICT_ARGS[label]
    _same(
        lambda: verdict_of(*a),
        lambda: Verdict(passed=a[0], reason=a[1], facts=a[2], verifier=a[3]),
    )


def _split_timing_reference(v: Verdict) -> tuple[Verdict, dict[str, float]]:
    timing = {k: float(x) for k, x in v.facts.items() if k in TIMING_FACTS}
    if not timing:
        return v, {}
    kept = {k: x for k, x in v.facts.items() if k not in TIMING_FACTS}
    return v.model_copy(update={"facts": kept}), timing


@pytest.mark.parametrize(
    "facts",
    [
        {"latency_ms": 1, "a": 2},
        {"latency_ms": 1, "queue_ms": "2.5", "a": 2},
        {"latency_ms": True},
        {"queue_ms": 1, "latency_ms": 2, "slowest_call_ms": 3, "call_limit_ms": 4, "b": 1},
        {"a": 1},
    ],
    ids=repr,
)
def test_split_timing_is_model_copy(facts: dict[str, Any]) -> None:
    made = [
        verdict_of(True, None, facts, "v"),
        Verdict(passed=True, score=0.5, facts=facts),
        Verdict.model_construct(passed=True, facts=facts),
    ]
    for v in made:
        (fast, timing), (ref, ref_timing) = v.split_timing(), _split_timing_reference(v)
        assert list(timing.items()) == list(ref_timing.items())
        assert _signature(fast) == _signature(ref)
        assert v.facts == facts  # the verdict split is left as it was


TRUTH_ARGS: dict[str, tuple[Any, ...]] = {
    "answer": ("1",),
    "form": ("1", "integer"),
    "unknown form": ("1", "decimal"),
    "enum form": ("1", _FormEnum.INTEGER),
    "str subclass form": ("1", _S("integer")),
    "str subclass answer": (_S("1"),),
    "int answer": (1,),
    "lone surrogate": ("\ud800", "simplest_radical"),
    "built form": ("1", "".join(["inte", "ger"])),
}


@pytest.mark.parametrize("label", sorted(TRUTH_ARGS))
def test_math_truth_is_the_validated_truth(label: str) -> None:
    a = TRUTH_ARGS[label]
    _same(
        lambda: math_truth(*a),
        lambda: MathTruth(answer=a[0]) if len(a) == 1 else MathTruth(answer=a[0], form=a[1]),
    )


# ---- 3. the kept held-out copies ------------------------------------------------------


def test_sources_over_one_family_never_serve_each_others_stamp() -> None:
    """Three sources over the same world families (whose tasks one LRU shares): the env's
    split (a family and a params region held out), no split, and the region only. Ids are
    resolved in turn by each, from several threads, while tasks are dropped, collected and
    evicted from the LRU and regenerated (ids of collected tasks reused): each source
    always serves a task stamped by its own split, and the family's task is never
    stamped."""
    from gymforge.envs.support_desk.families import FAMILIES, SPLIT
    from gymforge.tasks.source import TaskSource
    from gymforge.tasks.split import Split
    from gymforge.world import tasks as world_tasks

    sources = [
        TaskSource.of(FAMILIES, SPLIT),
        TaskSource.of(FAMILIES, Split()),
        TaskSource.of(FAMILIES, Split(regions=SPLIT.regions)),
    ]
    ids = [
        f.task_id(level, 8_100_000 + seed)
        for f in FAMILIES
        for level in sorted(f.levels)[:2]
        for seed in range(3)
    ]
    errors: list[str] = []

    def check(source: TaskSource, task_id: str) -> None:
        task = source.resolve(task_id)
        want = "heldout" if source.split.is_heldout(task.family, task.params) else "train"
        if task.split != want or task.task_id != task_id:
            errors.append(f"{task_id} {source.split.families} {task.split} != {want}")
        family_task = source.families[task.family].resolve(task_id)
        if family_task.split != "train":
            errors.append(f"{task_id}: the family's task is stamped {family_task.split}")

    def worker(seed: int) -> None:
        r = random.Random(seed)
        for _ in range(40):
            check(r.choice(sources), r.choice(ids))
            if r.random() < 0.2:
                key = next(iter(world_tasks._CACHE), None)
                if key is not None:
                    world_tasks._CACHE.pop(key, None)
            if r.random() < 0.1:
                gc.collect()

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:5]
    held = sum(source.resolve(i).split == "heldout" for source in sources for i in ids)
    assert held > 0  # the split did hold something out


@pytest.mark.usefixtures("young_heap")
def test_a_stamped_copy_is_not_served_after_its_family_task_is_regenerated() -> None:
    """The family's task is evicted and collected; a new one (which may take its id) is
    built for another id: the source serves each its own task, stamped as its split says."""
    from gymforge.envs.support_desk.families import FAMILIES, SPLIT
    from gymforge.tasks.source import TaskSource
    from gymforge.world import tasks as world_tasks

    source = TaskSource.of(FAMILIES, SPLIT)
    family = FAMILIES[0]
    level = sorted(family.levels)[0]
    for seed in range(12):
        task_id = family.task_id(level, 8_200_000 + seed)
        task = source.resolve(task_id)
        assert task.task_id == task_id
        assert task.split == ("heldout" if SPLIT.is_heldout(task.family, task.params) else "train")
        gone = weakref.ref(task)
        del task
        world_tasks._CACHE.pop((family.name, family.version, task_id), None)
        gc.collect()
        assert gone() is None
    assert not source._stamped
