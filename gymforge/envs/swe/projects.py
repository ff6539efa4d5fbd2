"""What a ``swe`` project template is made of (the templates themselves: ``templates``).

A ``Project`` is a package of modules of pure functions. Every function carries: its source
(the correct one), which other functions it calls (``uses``, by ``module.name``), a seeded
input generator, and the seeded bugs it can carry (``Mutation``: one exact snippet of its
source replaced by another, labelled with its bug class). Features are functions the
project does not have yet, with the issue text that specifies them. Everything here is data;
``repogen`` renders it into files and runs it (in the judge) for expected values.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

BUG_CLASSES = (
    "off_by_one",
    "wrong_operator",
    "swapped_arguments",
    "missing_edge_case",
    "wrong_default",
)
"""The seeded bug classes; ``wrong_default`` is held out as a whole family."""

HELD_OUT_PROJECT = "gridlib"
"""The project template held out as a whole family."""

Gen = Callable[[random.Random], list[Any]]


@dataclass(frozen=True)
class Mutation:
    bug: str
    old: str
    new: str


@dataclass(frozen=True)
class Fn:
    module: str
    name: str
    source: str
    gen: Gen
    doc: str
    mutations: tuple[Mutation, ...] = ()
    uses: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()  # names a refactor may rename it to

    @property
    def key(self) -> str:
        return f"{self.module}.{self.name}"


@dataclass(frozen=True)
class Feature:
    """A function to add: ``source`` is its reference, ``spec`` the issue's description
    (``{sep}``-style fields filled from ``options``, one picked per task)."""

    module: str
    name: str
    source: str
    gen: Gen
    spec: str
    options: tuple[dict[str, str], ...] = ({},)
    uses: tuple[str, ...] = ()


@dataclass(frozen=True)
class Project:
    package: str
    summary: str
    modules: dict[str, str]  # module -> its docstring
    fns: tuple[Fn, ...]
    features: tuple[Feature, ...] = field(default=())

    def fn(self, key: str) -> Fn:
        return next(f for f in self.fns if f.key == key)


# ---- input generators ---------------------------------------------------------------------
WORDS = ("alpha", "beta", "gamma", "delta", "x", "io", "data", "Node", "UPPER", "mixed-Case")


def text(r: random.Random, lo: int = 0, hi: int = 6) -> str:
    sep = r.choice([" ", "  ", " - ", ", ", "_"])
    return sep.join(r.choice(WORDS) for _ in range(r.randint(lo, hi)))


def cents(r: random.Random) -> int:
    return r.choice([0, 1, 99, 100, 250, 999, 1000, 4999, 5000]) + r.randint(0, 3000)


def cart_lines(r: random.Random) -> list[list[int]]:
    return [[cents(r), r.randint(1, 4), r.choice([0, 0, 10, 25, 50, 120])] for _ in range(3)]


def cell(r: random.Random, w: int = 6, h: int = 5) -> list[int]:
    return [r.randint(-1, w), r.randint(-1, h)]


def points(r: random.Random) -> list[list[int]]:
    return [[r.randint(-5, 9), r.randint(-5, 9)] for _ in range(r.randint(0, 5))]


def points_args(r: random.Random) -> list[Any]:
    return [points(r)]


# ---- filler modules (the repository-size knob) --------------------------------------------
def filler_fn(r: random.Random, i: int) -> tuple[str, str, Gen]:
    """A small seeded helper for filler module ``i``: (name, source, input generator)."""
    k, c = r.randint(2, 9), r.randint(-5, 5)
    letter = r.choice(string.ascii_lowercase)
    kinds: list[tuple[str, str, Gen]] = [
        (
            f"scale_{i}",
            f'def scale_{i}(x):\n    """x times {k}, plus {c}."""\n    return x * {k} + {c}\n',
            lambda r: [r.randint(-100, 100)],
        ),
        (
            f"count_{letter}_{i}",
            f'def count_{letter}_{i}(text):\n    """How many times {letter!r} occurs in text."""\n'
            f"    return text.count({letter!r})\n",
            lambda r: [text(r, 0, 6)],
        ),
        (
            f"every_{k}_{i}",
            f'def every_{k}_{i}(items):\n    """Every {k}th item, from the first."""\n'
            f"    return items[::{k}]\n",
            lambda r: [list(range(r.randint(0, 20)))],
        ),
    ]
    return kinds[r.randrange(len(kinds))]
