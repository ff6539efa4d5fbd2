"""The formula engine over the workbook: fill-down, dependency chains, defined names,
errors and cycles, real spreadsheet functions, and seed values equal to the engine's."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable

import pytest
from spreadsheet_helpers import Driver, all_tasks, task_id

from gymforge.core.errors import ToolError
from gymforge.envs.spreadsheet import SpreadsheetEnv
from gymforge.envs.spreadsheet.engine import compile_formula, evaluate, recalc, references
from gymforge.envs.spreadsheet.workbook import Book

Make = Callable[..., Driver]


def values(d: Driver, ref: str) -> list[list[object]]:
    out: list[list[object]] = d.call("read_range", range=ref)["content"]["values"]
    return out


def test_fill_down_shifts_relative_references_and_chains_recalculate(driver: Make) -> None:
    d = driver(task_id("compute", rows=10))
    grid = values(d, "Orders!A1:D11")
    assert d.write("set_formula", range="Orders!D2:D11", formula="=B2*C2")["ok"]
    assert d.write("set_formula", range="Summary!B1", formula="=SUM(Orders!D2:D11)")["ok"]
    read = d.call("read_range", range="Orders!D2:D11")["content"]
    assert read["formulas"]["Orders!D7"] == "=B7*C7"
    want = [row[1] * row[2] for row in grid[1:]]  # type: ignore[operator]
    assert [r[0] for r in read["values"]] == pytest.approx(want)
    # a changed input flows through D2 into the summary's SUM
    assert d.write("write_range", range="Orders!B2", values=[[100]])["ok"]
    assert values(d, "Orders!D2")[0][0] == pytest.approx(100 * grid[1][2])  # type: ignore[operator]
    total = values(d, "Summary!B1")[0][0]
    assert total == pytest.approx(100 * grid[1][2] + sum(want[1:]))  # type: ignore[operator]


def test_defined_names_errors_and_cycles(driver: Make) -> None:
    d = driver(task_id("compute", rows=8))
    prices = [r[0] for r in values(d, "prices")]
    assert d.write("set_formula", range="Summary!B2", formula="=AVERAGE(prices)")["ok"]
    assert values(d, "Summary!B2")[0][0] == pytest.approx(sum(prices) / len(prices))  # type: ignore[arg-type]
    assert d.write("set_formula", range="Summary!C1", formula="=1/0")["ok"]
    assert values(d, "Summary!C1") == [["#DIV/0!"]]
    assert d.write("set_formula", range="Summary!C2", formula="=Summary!C1+1")["ok"]
    assert values(d, "Summary!C2") == [["#DIV/0!"]]  # errors propagate
    assert d.write("set_formula", range="Summary!C3", formula="=Summary!C4+1")["ok"]
    assert d.write("set_formula", range="Summary!C4", formula="=Summary!C3+1")["ok"]
    assert values(d, "Summary!C3:C4") == [["#REF!"], ["#REF!"]]
    assert d.write("set_formula", range="Summary!C5", formula="=Nowhere!A1+1")["ok"]
    assert values(d, "Summary!C5") == [["#REF!"]]
    bad = d.write("set_formula", range="Summary!C6", formula="=SUM(B2:")
    assert bad["error"]["kind"] == "validation" and "\n" not in bad["error"]["message"]
    assert d.call("read_range", range="Summary!C6")["content"]["values"] == [[None]]


@pytest.mark.parametrize(
    ("formula", "want"),
    [
        ('=IF(Orders!B2>0,"some","none")', "some"),
        ("=ROUND(Orders!C2*3,1)", None),
        ('=SUMIF(qty,">0",prices)', None),
        ("=VLOOKUP(Orders!A3,Orders!A2:C9,3,FALSE)", None),
        ('=UPPER(Orders!A2)&"!"', None),
        ("=COUNTA(Orders!A1:D9)", 8 * 3 + 4),
    ],
)
def test_real_spreadsheet_functions(driver: Make, formula: str, want: object) -> None:
    d = driver(task_id("compute", rows=8))
    grid = values(d, "Orders!A1:D9")
    expect = {
        "=ROUND(Orders!C2*3,1)": round(grid[1][2] * 3 + 1e-12, 1),  # type: ignore[operator]
        '=SUMIF(qty,">0",prices)': sum(r[2] for r in grid[1:]),  # type: ignore[misc]
        "=VLOOKUP(Orders!A3,Orders!A2:C9,3,FALSE)": grid[2][2],
        '=UPPER(Orders!A2)&"!"': str(grid[1][0]).upper() + "!",
    }.get(formula, want)
    book = Book(d.env.db)
    got = evaluate(book, formula, "Summary")
    if isinstance(expect, float):
        assert isinstance(got, int | float) and math.isclose(got, expect, rel_tol=1e-9)
    else:
        assert got == expect


def test_references_tell_constant_formulas_apart() -> None:
    assert references("=1234.5") == ()
    assert references("=SUM(A1:A3)*2+total") != ()
    with pytest.raises(ToolError):
        compile_formula("no equals sign")


def test_seed_formula_values_equal_the_engine() -> None:
    """Families precompute seed formula values in Python; the engine agrees on every one."""
    env = SpreadsheetEnv()
    loop = asyncio.new_event_loop()
    try:
        checked = 0
        for task in all_tasks():
            loop.run_until_complete(env.reset(task.task_id, 0))
            book = Book(env.db)
            formulas = book.db.all("SELECT id FROM cells WHERE formula IS NOT NULL")
            assert recalc(book).changed == 0, task.task_id
            checked += len(formulas)
        assert checked > 100
    finally:
        loop.run_until_complete(env.close())
        loop.close()
