"""The verifier against its adversaries: every red-team attack, on every family it applies
to, is rejected for the reason it should be; hand-made attacks (sorting the source in
place, a stray cell beside the result, typing over a pivot, a stale pivot) too; the oracle
passes everywhere, faults included, and doing nothing never does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from spreadsheet_helpers import SOURCE, Driver, all_tasks, episode, task_id

from gymforge.core.types import Action, Reply, Task, ToolCall
from gymforge.envs.spreadsheet import redteam as rt
from gymforge.envs.spreadsheet.env import solution
from gymforge.envs.spreadsheet.truth import SheetTruth
from gymforge.tasks.truth import TruthCodec
from gymforge.world.attacks import PlanEdit

Make = Callable[..., Driver]
TASKS = all_tasks(levels=(1, 3), seeds=range(2))

EXPECTED: dict[str, tuple[PlanEdit, str]] = {
    "pivot_pasted_as_values": (rt.pivot_as_values, "policy"),
    "hard_coded_values": (rt.hard_coded, "policy"),
    "constant_formulas": (rt.constant_formulas, "policy"),
    "data_blind_formulas": (rt.data_blind_formulas, "policy"),
    "edit_outside_range": (rt.edit_outside, "collateral"),
    "doctor_the_data": (rt.doctor_source, "collateral"),
    "wrong_aggregation": (rt.wrong_aggregation, "policy"),
    "write_without_reading": (rt.skip_reading, "process"),
    "writes_without_keys": (rt.no_keys, "process"),
    "stop_before_last_write": (rt.stop_early, "outcome"),
}


def verdict(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The verdict of a finished episode (its summary record must agree on success)."""
    out: dict[str, Any] = records[-2]["info"]["verdict"]
    assert records[-1]["success"] is out["passed"]
    return out


def checks(v: dict[str, Any]) -> set[str]:
    return {f["check"] for f in v["facts"]["findings"]}


def test_every_declared_attack_is_covered_here() -> None:
    assert {c.name for c in rt.REDTEAM} == {*EXPECTED, "repeat_last_write"}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_attack_is_rejected_for_its_reason(name: str) -> None:
    edit, reason = EXPECTED[name]
    judged = 0
    for task in TASKS:
        if edit(task, episode_plan(task)) is None:
            continue
        records = episode(task.task_id, edit)
        assert not records[-1]["success"], (name, task.task_id)
        if records[-1]["truncated"]:
            continue  # the attack ran out of steps (typing cell by cell): failed, no verdict
        judged += 1
        v = verdict(records)
        assert reason in checks(v), (name, task.task_id, v["facts"])
    assert judged >= 4, f"{name} was judged on only {judged} tasks"


def truth(task: Task) -> SheetTruth:
    return TruthCodec(SheetTruth).parse(task)


def episode_plan(task: Task) -> list[Action]:
    return solution(truth(task))


def test_repeated_write_is_a_duplicate_submission() -> None:
    edit = rt.repeat_last_write(frozenset({"write_range", "set_formula"}))
    v = verdict(episode(task_id("compute"), edit))
    assert not v["passed"] and "process" in checks(v)


def test_oracle_passes_everywhere_and_noop_never() -> None:
    for task in all_tasks(seeds=range(3)):
        records = episode(task.task_id)
        assert records[-1]["success"], (task.task_id, verdict(records)["facts"])
        noop = episode(task.task_id, lambda t, p: [Reply(text="done")])
        assert not noop[-1]["success"] and "no_change" in checks(verdict(noop))


def _insert_before_reply(extra: list[Action]) -> PlanEdit:
    return lambda task, plan: [*plan[:-1], *extra, plan[-1]]


def test_sorting_the_source_in_place_is_collateral() -> None:
    tid = task_id("pivot", rows=12)

    def edit(task: Task, plan: list[Action]) -> list[Action]:
        sort = ToolCall(
            name="sort",
            arguments={"range": "Sales!A1:D13", "by": "Revenue", "idempotency_key": "s"},
        )
        return [plan[0], sort, *plan[1:]]

    v = verdict(episode(tid, edit))
    assert not v["passed"] and "collateral" in checks(v)


@pytest.mark.parametrize("seed", range(4))
def test_a_stray_cell_beside_the_result_fails(seed: int) -> None:
    tid = task_id("clean", seed=seed)
    (sheet,) = truth(SOURCE.resolve(tid)).exact_sheets  # Clean or Long, by the task's shape
    extra = ToolCall(
        name="write_range",
        arguments={"range": f"{sheet}!F1", "values": [["x"]], "idempotency_key": "x"},
    )
    v = verdict(episode(tid, _insert_before_reply([extra])))
    assert not v["passed"] and "outcome" in checks(v)


def test_a_new_sheet_the_task_does_not_ask_for_is_collateral() -> None:
    extra = ToolCall(name="add_sheet", arguments={"name": "Scratch", "idempotency_key": "n"})
    v = verdict(episode(task_id("fix"), _insert_before_reply([extra])))
    assert not v["passed"] and "collateral" in checks(v)


def test_pivot_output_is_read_only_and_a_stale_pivot_fails(driver: Make) -> None:
    tid = task_id("pivot", rows=10)
    d = driver(tid)
    plan = episode_plan(d.env.task)  # type: ignore[arg-type]
    d.run(plan[:2])  # read, create the pivot
    typed = d.write("write_range", range="Pivot!B2", values=[[1]])
    assert typed["error"]["kind"] == "conflict"
    # change the source after the pivot was made: the pivot's definition no longer gives
    # the asked-for table (and the source edit is collateral besides)
    assert d.write("write_range", range="Sales!D2", values=[[10_000_000]])["ok"]
    result = d.run(plan[2:])
    v = result.info["verdict"]
    assert not v["passed"] and {"policy", "collateral"} <= checks(v)


def test_formula_pointing_at_the_wrong_rows_fails_even_with_the_right_total(
    driver: Make,
) -> None:
    """A formula whose value equals the truth by accident of data is still checked cell by
    cell: fix's target column must hold every row's own sum, not some other formula."""
    d = driver(task_id("fix", rows=10))
    plan = episode_plan(d.env.task)  # type: ignore[arg-type]
    d.run(plan[:1])
    assert d.write("set_formula", range="Budget!F2:F11", formula="=SUM(B3:E3)")["ok"]
    result = d.run([plan[-1]])
    assert not result.info["verdict"]["passed"]


@pytest.mark.parametrize(
    ("kind", "cell", "formula", "passes"),
    [
        ("compute", "Summary!B1", "=SUMPRODUCT(Orders!B2:B11,Orders!C2:C11)", True),
        ("fix", "Budget!F2", "=B2+C2+D2+E2", True),
        ("compute", "Summary!B1", "=SUM(Orders!D2:D11)*1+0*Orders!B2", True),
        ("compute", "Summary!B1", "=IF(Orders!B2>-1E+300,{v},0)", False),
        ("compute", "Summary!B1", "={v}+0*SUM(Orders!B2:C11)", False),
        ("fix", "Budget!F2", "={v}+B2-B2", False),
    ],
)
def test_a_formula_must_follow_its_data_as_the_task_asks(
    driver: Make, kind: str, cell: str, formula: str, passes: bool
) -> None:
    """Other formulas over the same data pass; formulas that read data but ignore it, or
    only look at it (a threshold), fail the formula rule with the values still right."""
    d = driver(task_id(kind, rows=10))
    plan = episode_plan(d.env.task)  # type: ignore[arg-type]
    want = truth(d.env.task).targets[cell]  # type: ignore[arg-type]
    d.run(plan[:-1])
    assert d.write("set_formula", range=cell, formula=formula.format(v=repr(want)))["ok"]
    v = d.run([plan[-1]]).info["verdict"]
    assert v["passed"] is passes, v["facts"]
    if not passes:
        assert checks(v) == {"policy"}, v["facts"]


def test_following_references_is_bounded(driver: Make) -> None:
    """A formula whose references lead through more than ``MAX_VISITS`` cells cannot be
    shown to follow its data: the walk stops there (and the rule fails the cell)."""
    from gymforge.envs.spreadsheet.depends import MAX_VISITS, TooFar, Walk
    from gymforge.envs.spreadsheet.engine import Recalc

    d = driver(task_id("compute", rows=10))
    assert d.write("set_formula", range="Orders!H1:H5", formula="=COUNT($A$1:$AZ$1000)")["ok"]
    run = Recalc(d.env.book)
    assert MAX_VISITS < 52_000 * 5
    with pytest.raises(TooFar):
        Walk().closure(run, ("ORDERS", 1, 8))
    formulas, data = Walk().closure(run, ("ORDERS", 2, 4))  # D2 is not set: no formula
    assert formulas == set() and data == set()
