"""A task id is parsed or refused with ``UnknownTaskError``, never another exception, and
names one task in one spelling: digits are ASCII (``\\d`` also matches other scripts' digits,
so ``s\\u0665`` named the task ``s5`` does, and an id-keyed check such as a held-out
exclusion would not see the two as one), a number past ``int``'s digit limit and a param
nested past ``json.loads``' recursion are refused like any other bad id."""

from __future__ import annotations

import pytest

from gymforge.core.errors import UnknownTaskError
from gymforge.tasks.task_id import parse_task_id


@pytest.mark.parametrize(
    "task_id",
    [
        "math.arith/v2/d1/s\u0665",  # Arabic-Indic 5
        "math.arith/v\u0662/d1/s5",
        "math.arith/v2/d\uff11/s5",  # fullwidth 1
        "math.arith/v2/d1/s" + "9" * 5000,
        "math.arith/v2/d1/s5/x=" + "[" * 100_000 + "]" * 100_000,
        "math.arith/v2/d1/s5/x=" + '{"a":' * 50_000 + "1" + "}" * 50_000,
    ],
    ids=["arabic-seed", "arabic-version", "fullwidth-level", "huge-seed", "deep-list",
         "deep-object"],
)  # fmt: skip
def test_an_odd_id_is_refused_by_name(task_id: str) -> None:
    with pytest.raises(UnknownTaskError):
        parse_task_id(task_id)


def test_a_plain_id_still_parses() -> None:
    tid = parse_task_id('math.arith/v2/d1/s5/terms=3,name="x"')
    assert (tid.family, tid.version, tid.difficulty, tid.seed) == ("math.arith", 2, 1, 5)
    assert tid.params == {"terms": 3, "name": "x"}
