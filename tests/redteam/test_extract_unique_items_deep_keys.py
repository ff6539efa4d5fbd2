"""Attack: slow the extract judge's ``uniqueItems`` with items nested deep, each unique.

``uniqueItems`` is checked by sorting one key per item (``json_unique``), never pairwise. The
key was a tuple nested as deep as the item, and Python compares nested tuples by first
testing each level for equality, which walks down the whole subtree, then ordering that
level, which walks it again: one comparison of two items nested ``d`` deep cost ``d**2``
steps, not ``d``. A reply of 1,500 distinct ``[[[...[i]...]]]`` items 31 deep (98 kB, under
the 100 kB and 32-level caps) took 200 ms of the judge's time on the event loop that served
sessions share, for an answer that scores nothing, where the JSON judge's documented ceiling
is a few ms. Success would be a comparison of two keys whose cost grows with the square of
the nesting; the test counts the comparisons of the items' innermost values, not time. The
defence: a key is a flat sequence of ``(tag, scalar)`` tokens with explicit ends, compared
in one pass.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gymforge.verify.json_schema import JsonSchemaVerifier
from gymforge.verify.json_unique import all_unique
from tests.budget import examples


class CountedText(str):
    """A string that counts how often it is compared (a sort compares keys' leaves)."""

    compared = [0]

    def __eq__(self, other: object) -> bool:
        CountedText.compared[0] += 1
        return str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        CountedText.compared[0] += 1
        return str.__ne__(self, other)

    def __lt__(self, other: str) -> bool:
        CountedText.compared[0] += 1
        return str.__lt__(self, other)

    def __gt__(self, other: str) -> bool:
        CountedText.compared[0] += 1
        return str.__gt__(self, other)

    __hash__ = str.__hash__


def _deep(depth: int, leaf: Any, as_object: bool) -> Any:
    for _ in range(depth):
        leaf = {"k": leaf} if as_object else [leaf]
    return leaf


def _leaf_comparisons(depth: int, as_object: bool, n: int = 200) -> int:
    items = [_deep(depth, CountedText(f"{i:04d}"), as_object) for i in range(n)]
    items.reverse()  # a sort that has work to do
    CountedText.compared[0] = 0
    assert all_unique(items)
    return CountedText.compared[0]


def test_comparing_deep_items_costs_what_comparing_flat_ones_does() -> None:
    n = 200
    bound = 3 * n * math.ceil(math.log2(n))  # a few leaf comparisons per key comparison
    for as_object in (False, True):
        flat = _leaf_comparisons(0, as_object, n)
        deep = _leaf_comparisons(31, as_object, n)
        assert deep <= bound, (as_object, flat, deep)
        assert deep <= 2 * flat, (as_object, flat, deep)


def _spec_equal(a: Any, b: Any) -> bool:
    """JSON Schema's equality, pairwise (``jsonschema``'s ``equal``; its ``uniq`` sorts with
    Python's ``True == 1`` and so misses ``[[1], [true], [1]]``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_spec_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_spec_equal(a[k], b[k]) for k in a)
    return bool(a == b)


_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.sampled_from([0.0, -0.0, 1.0, 2.0, 0.5, 2.0**53, 2**53 + 1]),
    st.sampled_from(["", "a", "1", "true", "k"]),
)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["", "a", "k"]), inner, max_size=3)
    ),
    max_leaves=8,
)


@examples(3_000)
def test_unique_items_is_json_schema_equality(examples: int) -> None:
    @settings(max_examples=examples, deadline=None, database=None, derandomize=True)
    @given(st.lists(_VALUES, max_size=5))
    def check(items: list[Any]) -> None:
        expected = not any(_spec_equal(a, b) for a, b in itertools.combinations(items, 2))
        assert all_unique(items) is expected

    check()


def test_nested_booleans_are_not_numbers_even_where_jsonschema_sorts_them_apart() -> None:
    verifier = JsonSchemaVerifier({"type": "array", "uniqueItems": True})
    assert not verifier.judge_value([[1], [True], [1]]).passed
    assert not verifier.judge_value([[0], [False], [0.0]]).passed
    assert verifier.judge_value([[1], [True]]).passed
