"""A crafted task id against the task-generation shortcuts: the ``draws`` fast paths, the
int-pair fractions of ``envs.math.exact``, the fast task-id parse and the family memo of
difficulty and seed text (``TaskFamily._known``). The attack resolves ids a hostile dataset
could carry (an int posing as a bool, float-looking ints, duplicate keys, whitespace,
Unicode digits, huge seeds) on the shared families, memo warm, between ordinary draws; its
success would be any id that resolves to another task, or refuses differently, than it did
through ``random.Random``'s own methods, ``Fraction`` and ``derive_seed``, or an id that
changes what a later one resolves to (a poisoned memo)."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import pytest

from gymforge.core.seeding import derive_seed
from gymforge.envs.math import arith, counting, linear, modular, rationals, roots
from gymforge.tasks import TaskFamily, family
from gymforge.tasks import task_id as task_ids

MODULES = [arith, counting, linear, modular, rationals, roots]


def _pair(q: Fraction) -> tuple[int, int]:
    return q.numerator, q.denominator


def _f(q: tuple[int, int]) -> Fraction:
    return Fraction(*q)


REFERENCE: dict[str, Any] = {
    "randint": lambda r, lo, hi: r.randint(lo, hi),
    "choice": lambda r, seq: r.choice(seq),
    "reduced": lambda num, den: _pair(Fraction(num, den)),
    "add": lambda a, b: _pair(_f(a) + _f(b)),
    "sub": lambda a, b: _pair(_f(a) - _f(b)),
    "mul": lambda a, b: _pair(_f(a) * _f(b)),
    "div": lambda a, b: _pair(_f(a) / _f(b)),
}


@contextlib.contextmanager
def without_shortcuts() -> Iterator[None]:
    """Every module's draws and fraction operations as ``random.Random`` and ``Fraction``
    do them, each task's seed through ``derive_seed``, each id parsed by ``TaskId``."""
    with pytest.MonkeyPatch.context() as m:
        for module in [*MODULES, family]:
            for name, fn in REFERENCE.items():
                if hasattr(module, name):
                    m.setattr(module, name, fn)
        m.setattr(arith, "OPS", {k: REFERENCE[v.__name__] for k, v in arith.OPS.items()})
        m.setattr(TaskFamily, "_known", lambda self, params, items: (self.difficulty(params), None))
        m.setattr(task_ids, "_task_id", task_ids.TaskId)
        m.setattr(task_ids, "_LAST_PARSED", [])
        yield


def crafted_ids() -> list[str]:
    a = "math.arith/v2/d1/s5/"
    ids = [
        a + "division=false,magnitude=9,terms=3",
        a + "division=0,magnitude=9,terms=3",  # an int the bool knob contains (0 == False)
        a + "division=false,magnitude=9,terms=3",  # again, after the int
        a + "division=false,magnitude=9.0,terms=3",  # a float-looking int
        a + "division=false,magnitude=1e1,terms=3",
        a + "division=false,magnitude=true,terms=3",
        a + "division=false,magnitude=9,terms=4,terms=3",  # duplicate key: the last wins
        a + "division=false,magnitude= 9,terms=3 ",  # whitespace around a value
        a + "division=false, magnitude=9,terms=3",  # around a key
        a + "division=null,magnitude=9,terms=3",
        a + "division=false,magnitude=9,terms=3,extra=1",
        "math.arith/v2/d1/s\u0665/division=false,magnitude=9,terms=3",  # Arabic-Indic 5
        "math.arith/v2/d\u0661/s\u0665",
        "math.arith/v2/d1/s05",
        "math.arith/v2/d1/s" + "9" * 40 + "/division=false,magnitude=9,terms=3",
        "math.arith/v1/d2/s7/division=true,magnitude=50,terms=5",
        "math.arith/v2/d2/s7/division=1,magnitude=50,terms=5",
        "math.rationals/v2/d1/s3/denominator=6,terms=2",
        "math.rationals/v1/d1/s3/denominator=6,terms=2",
    ]
    for module in MODULES:  # every family's drawn params, as an explicit id
        fam = module.FAMILY
        for d in sorted(fam.levels):
            for seed in (0, 1):
                ids.append(fam.variant_id(fam.params_for(d, seed), seed))
    return ids


def outcomes() -> list[Any]:
    """Drawn tasks of every family, version and level, with the crafted ids between them."""
    out: list[Any] = []
    crafted = crafted_ids()
    by_name = {m.FAMILY.name: m.FAMILY for m in MODULES}
    for module in MODULES:
        for fam in (module.FAMILY, *module.FAMILY.older.values()):
            for d in sorted(fam.levels):
                for seed in range(12):
                    out.append(fam.task(d, seed).model_dump())
                    task_id = crafted[(seed + d) % len(crafted)]
                    try:
                        out.append(by_name[task_id.split("/")[0]].resolve(task_id).model_dump())
                    except Exception as err:  # the refusal is the outcome
                        out.append((task_id, type(err).__name__, str(err)))
    return out


def test_crafted_ids_resolve_as_without_the_shortcuts() -> None:
    with without_shortcuts():
        want = outcomes()
    got = outcomes()  # memo warm from the module-level families' earlier use too
    assert got == want
    assert outcomes() == want  # and again, every memo warm from the crafted ids


def test_the_reference_is_not_the_shortcuts() -> None:
    """The patches reach the code they stand for (a comparison of the shortcuts with
    themselves would hold nothing): under them, a task's draws go through
    ``random.Random.randint`` and its seed through ``derive_seed``; without them, neither."""
    calls: list[str] = []
    randint = random.Random.randint

    def counted_randint(*args: Any) -> int:
        calls.append("randint")
        return randint(*args)

    def counted_derive(*parts: Any) -> int:
        calls.append("derive")
        return derive_seed(*parts)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(random.Random, "randint", counted_randint)
        m.setattr(family, "derive_seed", counted_derive)
        arith.FAMILY.task(1, 3)
        arith.FAMILY.task(1, 3)
        assert calls == []
        with without_shortcuts():
            arith.FAMILY.task(1, 3)
        assert {"randint", "derive"} <= set(calls)
