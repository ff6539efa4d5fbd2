"""References built from text at evaluation time (``INDIRECT("Orders!D"&ROW(A2))``,
``OFFSET``): the cells such a formula reads are not in its text, so neither the dependency
order of recalculation nor the verifier's "formula over the data" rule can see them. Its
success (the formula accepted) would let a policy hide what a formula depends on, or point
it at cells chosen by a string. Such functions must be refused where the formula is taken in,
with a message naming them; the workbook is left unchanged. (A literal ``INDIRECT("B2")``
is resolved by the parser into an ordinary reference, so it is tracked.)"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "envs" / "spreadsheet"))

from spreadsheet_helpers import Driver, task_id

BUILT = [
    ('=SUM(INDIRECT("Orders!D"&ROW(A2)&":D11"))', "INDIRECT"),
    ("=SUM(OFFSET(Orders!D1,1,0,10,1))", "OFFSET"),
    ('=IFERROR(INDIRECT(Summary!A1&"2"),0)+Orders!C2', "INDIRECT"),
]


@pytest.mark.parametrize(("formula", "name"), BUILT)
def test_text_built_references_are_refused(formula: str, name: str) -> None:
    d = Driver(task_id("compute", rows=10))
    try:
        before = d.call("read_range", range="Summary!A1:B3")["content"]
        out = d.call("set_formula", range="Summary!B1", formula=formula, idempotency_key="k1")
        assert not out["ok"], out
        assert out["error"]["kind"] == "validation" and name in out["error"]["message"], out
        assert d.call("read_range", range="Summary!A1:B3")["content"] == before
    finally:
        d.close()


def test_a_literal_indirect_is_a_tracked_reference() -> None:
    """The engine resolves ``INDIRECT("Orders!B2")`` (a literal) while parsing: it is an
    ordinary reference, listed among the formula's inputs, so it is tracked, not hidden."""
    from gymforge.envs.spreadsheet.engine import references

    assert references('=INDIRECT("Orders!B2")*2') == ("ORDERS!B2",)
