"""The formula engine's bounds: what a formula may call, what an evaluation may cost, and
that ordinary formulas never notice them (long chains included)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from spreadsheet_helpers import Driver, task_id

from gymforge.core.errors import ToolError
from gymforge.envs.spreadsheet.engine import compile_formula, trace
from gymforge.envs.spreadsheet.limits import ALLOWED, MAX_FORMULA, MAX_TEXT, RECALC_WORK

Make = Callable[..., Driver]


@pytest.mark.parametrize(
    ("formula", "name"),
    [
        ("=RAND()*Orders!B2", "RAND"),
        ("=NOW()", "NOW"),
        ("=COMBIN(Orders!B2,2)", "COMBIN"),  # not implemented by the engine: refused, named
        ("=ISFORMULA(Orders!D2)", "ISFORMULA"),
        ("=_xlfn.MAKEARRAY(2,2,Orders!B2)", "MAKEARRAY"),
        ("=MAP(Orders!B2:B3,lambda (x,x))", "LAMBDA"),  # refused before parsing
    ],
)
def test_functions_outside_the_allow_list_are_refused_by_name(formula: str, name: str) -> None:
    assert name not in ALLOWED
    with pytest.raises(ToolError) as err:
        compile_formula(formula)
    assert err.value.kind == "validation" and name in err.value.message


def test_formula_size_and_nesting_are_bounded() -> None:
    with pytest.raises(ToolError, match="characters"):
        compile_formula("=" + "+".join(["1"] * (MAX_FORMULA // 2 + 1)))
    with pytest.raises(ToolError, match="nests"):
        compile_formula("=" + "(" * 65 + "1" + ")" * 65)
    compile_formula("=" + "(" * 60 + "Orders!B2" + ")" * 60)


def test_ordinary_formulas_are_untouched(driver: Make) -> None:
    d = driver(task_id("compute", rows=10))
    book = d.env.book
    assert trace(book, '=COUNTIF(Orders!A2:A11,"*-1*")', "Summary").reason is None
    assert trace(book, '=TEXTJOIN(",",TRUE,Orders!A2:A11)', "Summary").reason is None
    t = trace(book, "=SUMPRODUCT(Orders!B2:B11,Orders!C2:C11)", "Summary")
    assert isinstance(t.value, float | int) and t.reason is None and t.work < 1_000


def test_a_limit_error_is_local_unless_the_budget_is_spent(driver: Make) -> None:
    """An over-long text is ``#VALUE!`` that ``IFERROR`` may catch (as in Excel); a spent
    work budget is ``#VALUE!`` whatever ``IFERROR`` says."""
    d = driver(task_id("compute", rows=10))
    book = d.env.book
    assert trace(book, f'=IFERROR(REPT("x",{MAX_TEXT + 1}),"short")', "Summary").value == "short"
    assert d.write("write_range", range="Summary!B2", values=[["a" * 3000]])["ok"]
    spent = trace(book, '=IFERROR(COUNTIF(Summary!B2,"*a*a*b"),0)', "Summary")
    assert spent.value == "#VALUE!" and spent.reason and "wildcard" in spent.reason


def test_a_cell_holds_at_most_excel_text(driver: Make) -> None:
    """(Called on the tool itself: through ``step`` such a call ends on the token budget.)"""
    d = driver(task_id("compute", rows=10))
    with pytest.raises(ToolError, match=str(MAX_TEXT)):
        d.env.write_range(range="Summary!B2", values=[["a" * (MAX_TEXT + 1)]])
    assert d.env.book.grid(d.env.book.box("Summary!B2")) == [[None]]


def test_a_thousand_cell_chain_computes_without_recursion(driver: Make) -> None:
    d = driver(task_id("compute", rows=10))
    assert d.write("write_range", range="Orders!F1", values=[[1]])["ok"]
    out = d.write("set_formula", range="Orders!F2:F1000", formula="=F1+1")
    assert out["ok"] and "errors" not in out["content"]
    assert d.call("read_range", range="Orders!F1000")["content"]["values"] == [[1000]]


def test_the_recalculation_budget_is_deterministic(driver: Make) -> None:
    """Forty cells each summing the whole grid exceed one recalculation's work: the cells
    past the budget are ``#VALUE!`` with the reason, the same cells every time."""
    seen = []
    for _ in range(2):
        d = driver(task_id("compute", rows=10))
        out = d.write("set_formula", range="Orders!H1:H40", formula="=SUM($A$1:$AZ$1000)")
        assert out["ok"], out
        values = d.call("read_range", range="Orders!H1:H40")["content"]["values"]
        seen.append(values)
        assert out["content"]["errors"], out
        assert any(str(RECALC_WORK) in why for why in out["content"]["errors"].values())
    assert seen[0] == seen[1]
    assert {v[0] for v in seen[0]} >= {"#VALUE!"} and any(v[0] != "#VALUE!" for v in seen[0])
