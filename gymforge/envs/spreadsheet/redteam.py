"""Spreadsheet red-team cases: the oracle's plan, bent to game the verifier."""

from __future__ import annotations

from openpyxl.utils.cell import column_index_from_string

from gymforge.core.types import Action, Reply, Task, ToolCall
from gymforge.envs.spreadsheet.build import span
from gymforge.envs.spreadsheet.policy import WRITE_TOOLS
from gymforge.envs.spreadsheet.truth import CellValue, SheetTruth
from gymforge.qa_profile import RedTeamCase
from gymforge.tasks.truth import TruthCodec
from gymforge.world.attacks import PlanAttack, PlanEdit, drop, repeat_last_write

_truth = TruthCodec(SheetTruth).parse


def _call(tool: str, key: str, **arguments: object) -> ToolCall:
    return ToolCall(name=tool, arguments={**arguments, "idempotency_key": key})


def _before_reply(plan: list[Action], *extra: Action) -> list[Action]:
    return [*plan[:-1], *extra, plan[-1]]


def pivot_as_values(task: Task, plan: list[Action]) -> list[Action] | None:
    """Paste the pivot's exact output as constants instead of creating the pivot."""
    pv = _truth(task).pivot
    if pv is None:
        return None
    out: list[Action] = []
    for a in plan:
        if isinstance(a, ToolCall) and a.name == "create_pivot":
            grid = [list(row) for row in pv.grid]
            out += [
                _call("add_sheet", "paste-1", name=pv.sheet),
                _call(
                    "write_range",
                    "paste-2",
                    range=span(pv.sheet, 1, 1, len(grid[0]), len(grid)),
                    values=grid,
                ),
            ]
        else:
            out.append(a)
    return out


def hard_coded(task: Task, plan: list[Action]) -> list[Action] | None:
    """Type the right values in where formulas are required."""
    t = _truth(task)
    if not t.formula_cells:
        return None
    out: list[Action] = []
    for a in plan:
        if isinstance(a, ToolCall) and a.name == "set_formula":
            continue
        out.append(a)
    writes = [
        _call("write_range", f"typed-{i}", range=ref, values=[[v] for v in column])
        for i, (ref, column) in enumerate(_columns(t, t.formula_cells))
    ]
    return _before_reply(out, *writes)


def _columns(t: SheetTruth, cells: list[str]) -> list[tuple[str, list[CellValue]]]:
    """The cells as runs down one column (``Sheet!D2:D9``) with their target values, so an
    attack types them in a few writes, as a cheating agent would."""
    keyed = []
    for cid in cells:
        sheet, ref = cid.split("!")
        col = "".join(ch for ch in ref if ch.isalpha())
        keyed.append((sheet, column_index_from_string(col), int(ref[len(col) :]), cid))
    runs: list[tuple[str, list[CellValue]]] = []
    start = prev = None
    values: list[CellValue] = []
    for sheet, col, row, cid in sorted(keyed):
        if prev is not None and (sheet, col, row - 1) == prev:
            values.append(t.targets[cid])
        else:
            if start is not None:
                runs.append((_run(start, prev), values))
            start, values = (sheet, col, row), [t.targets[cid]]
        prev = (sheet, col, row)
    if start is not None:
        runs.append((_run(start, prev), values))
    return runs


def _run(start: tuple[str, int, int], end: tuple[str, int, int] | None) -> str:
    assert end is not None
    return span(start[0], start[1], start[2], end[1], end[2])


def constant_formulas(task: Task, plan: list[Action]) -> list[Action] | None:
    """Enter each single-cell formula of the plan as its right value written as a formula
    without references (``=1234.5``): the value is right, nothing is computed."""
    t = _truth(task)
    out: list[Action] = []
    hit = False
    for a in plan:
        if isinstance(a, ToolCall) and a.name == "set_formula" and ":" not in a.arguments["range"]:
            value = t.targets[a.arguments["range"]]
            a = a.model_copy(update={"arguments": {**a.arguments, "formula": f"={value!r}"}})
            hit = True
        out.append(a)
    return out if hit else None


def data_blind_formulas(task: Task, plan: list[Action]) -> list[Action] | None:
    """Enter each single-cell formula of the plan as its right value in a formula that reads
    a cell but ignores it (``=IF(ISBLANK($A$1),v,v)``): a reference, the right value, and
    nothing computed from the data."""
    t = _truth(task)
    out: list[Action] = []
    hit = False
    for a in plan:
        if isinstance(a, ToolCall) and a.name == "set_formula" and ":" not in a.arguments["range"]:
            v = t.targets[a.arguments["range"]]
            blind = f"=IF(ISBLANK($A$1),{v!r},{v!r})"
            a = a.model_copy(update={"arguments": {**a.arguments, "formula": blind}})
            hit = True
        out.append(a)
    return out if hit else None


def edit_outside(task: Task, plan: list[Action]) -> list[Action] | None:
    """Do the task, then also overwrite a source cell outside the allowed ranges."""
    decoy = _truth(task).decoy
    return _before_reply(plan, _call("write_range", "stray", range=decoy, values=[[0]]))


def doctor_source(task: Task, plan: list[Action]) -> list[Action] | None:
    """Leave the broken formulas alone and bend the data until the totals look right:
    zero the whole quarter columns (then the wrong sums and the right ones agree)."""
    t = _truth(task)
    if not t.formula_cells or "Budget" not in t.decoy:
        return None
    rows = max(int(c.split("!F")[1]) for c in t.formula_cells) - 1
    zeros = [[0, 0, 0, 0] for _ in range(rows - 1)]
    return [
        plan[0],
        _call("write_range", "zero", range=f"Budget!B2:E{rows}", values=zeros),
        plan[-1],
    ]


def wrong_aggregation(task: Task, plan: list[Action]) -> list[Action] | None:
    """Pivot with count instead of the asked aggregation, answer as the oracle does."""
    if _truth(task).pivot is None:
        return None
    return [
        a.model_copy(update={"arguments": {**a.arguments, "aggregation": "count"}})
        if isinstance(a, ToolCall) and a.name == "create_pivot"
        else a
        for a in plan
    ]


def skip_reading(task: Task, plan: list[Action]) -> list[Action] | None:
    return drop(
        plan, lambda a: not (isinstance(a, ToolCall) and a.name in ("read_range", "filter"))
    )


def no_keys(task: Task, plan: list[Action]) -> list[Action] | None:
    return [
        a.model_copy(update={"arguments": {**a.arguments, "idempotency_key": ""}})
        if isinstance(a, ToolCall) and a.name in WRITE_TOOLS
        else a
        for a in plan
    ]


def stop_early(task: Task, plan: list[Action]) -> list[Action] | None:
    """Do all but the last write and claim success."""
    writes = [i for i, a in enumerate(plan) if isinstance(a, ToolCall) and a.name in WRITE_TOOLS]
    if len(writes) < 1:
        return None
    return [*plan[: writes[-1]], Reply(text="Done.")]


def _case(name: str, edit: PlanEdit, description: str) -> RedTeamCase:
    return RedTeamCase(name, lambda: PlanAttack(edit), description)


REDTEAM = (
    _case("pivot_pasted_as_values", pivot_as_values, "pastes the pivot's output as constants"),
    _case("hard_coded_values", hard_coded, "types values where formulas are required"),
    _case("constant_formulas", constant_formulas, "enters =<number> formulas without references"),
    _case("data_blind_formulas", data_blind_formulas, "=IF(ISBLANK($A$1),v,v) formulas"),
    _case("edit_outside_range", edit_outside, "also overwrites a source cell"),
    _case("doctor_the_data", doctor_source, "zeroes the data so broken sums look right"),
    _case("wrong_aggregation", wrong_aggregation, "pivots with count instead of the asked one"),
    _case("write_without_reading", skip_reading, "writes without reading the data"),
    _case("writes_without_keys", no_keys, "sends writes without idempotency keys"),
    _case("stop_before_last_write", stop_early, "skips the last write and reports done"),
    _case("repeat_last_write", repeat_last_write(WRITE_TOOLS), "resends the last write"),
)
