"""Attack: stall the judge through the test's own ``set()`` of what the candidate returns.

MBPP's tests hash candidate values in the judge: ``assert set(similar_elements(...)) ==
set((4, 5))`` (task 2 of the sanitized split), ``Counter(...)``, ``dict(...)``. A candidate
that returns a *list* of ~40k multiples of 2**61 - 1 (all hash to 0; 1 MB, inside the
return-value cap; a list, so the decoder has no set to refuse) makes that ``set()``
quadratic: about 10 s of the judge's own time per call, outside every sandbox limit, three
calls per answer, and a GRPO batch of such answers stalls training. Success would mean the
test gets to hash such a value. The defence: the judge refuses a return value in which more
than a few distinct values share a hash (linear to check), so the call fails before any test
code sees it. No timing is asserted: the refusal is.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from judge_fixture import judge_on_bwrap

from gymforge.verify.code import CodeJudge
from gymforge.verify.code.flood import MAX_SAME_HASH, Flooded, unflooded

SIMILAR = {
    "kind": "mbpp",
    "test_setup_code": "",
    "test_list": [
        "assert set(similar_elements((3, 4, 5, 6),(5, 7, 4, 10))) == set((4, 5))",
        "assert set(similar_elements((1, 2, 3, 4),(5, 4, 3, 7))) == set((3, 4))",
        "assert set(similar_elements((11, 12, 14, 13),(17, 15, 14, 13))) == set((13, 14))",
    ],
}
HONEST = "def similar_elements(a, b):\n    return tuple(set(a) & set(b))\n"
# 20k colliding integers: enough that the unfixed judge visibly stalls (seconds per call)
# while this test still finishes on it; the attack proper uses ~40k (the 1 MB cap).
FLOOD = "M = 2**61 - 1\ndef similar_elements(a, b):\n    return [i * M for i in range(1, 20_000)]\n"
PAIRS = (  # for set(map(tuple, ...)): pairs whose tuples all hash alike
    "M = 2**61 - 1\n"
    "def similar_elements(a, b):\n    return [[i * M, 0] for i in range(1, 10_000)]\n"
)


@pytest.fixture(scope="module")
def judge() -> Iterator[CodeJudge]:
    yield from judge_on_bwrap()


def test_the_honest_answer_passes(judge: CodeJudge) -> None:
    v = judge.judge(SIMILAR, HONEST)
    assert v.passed and v.facts["tests_passed"] == 3, v


@pytest.mark.parametrize("attack", [FLOOD, PAIRS], ids=["ints", "pairs"])
def test_a_hash_flooded_return_value_is_refused_before_the_test_hashes_it(
    judge: CodeJudge, attack: str
) -> None:
    task = SIMILAR
    if attack is PAIRS:
        task = {
            **SIMILAR,
            "test_list": [
                t.replace("set(similar_elements", "set(map(tuple, similar_elements").replace(
                    ")) ==", "))) =="
                )
                for t in SIMILAR["test_list"]
            ],
        }
    v = judge.judge(task, attack)
    assert not v.passed and v.facts["tests_passed"] == 0, v
    assert v.facts["unserialisable"] == 3, v  # every call refused
    assert any("hash flooding" in n for n in v.facts.get("notes", [])), v


def test_honest_values_with_repeats_and_equal_numbers_are_not_flooding() -> None:
    unflooded([0] * 100_000)
    unflooded([1, 1.0, True, -1, -2] * 1000)  # equal values, and -1/-2 (same hash)
    unflooded([[i, i + 1] for i in range(50_000)])
    unflooded({"a": list(range(10_000)), "b": [(1, 2)] * 10_000})
    m = 2**61 - 1
    unflooded([i * m for i in range(MAX_SAME_HASH)] * 100)  # a few, repeated
    with pytest.raises(Flooded):
        unflooded({"k": [[0, [i * m]] for i in range(MAX_SAME_HASH + 1)]})  # deep inside
