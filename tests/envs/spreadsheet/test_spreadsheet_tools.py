"""The tools one by one: clear one-line errors that change nothing, sort and filter,
sheets and names, seeded faults (timeouts, stale reads, permission errors) and idempotent
retries of writes that timed out after their commit."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from spreadsheet_helpers import Driver, task_id

from gymforge.core.types import ToolCall
from gymforge.envs.spreadsheet import SpreadsheetEnv
from gymforge.world.writes import WorldFaults

Make = Callable[..., Driver]


@pytest.mark.parametrize(
    ("tool", "args", "kind"),
    [
        ("read_range", {"range": "Nope!A1:B2"}, "not_found"),
        ("read_range", {"range": "A1:B2"}, "validation"),
        ("read_range", {"range": "Orders!A1:ZZ9"}, "validation"),
        ("read_range", {"range": "Orders!A1:AZ1000"}, "validation"),
        ("write_range", {"range": "Orders!A1:B1", "values": [[1]]}, "validation"),
        ("write_range", {"range": "Orders!A1", "values": [[1], [2, 3]]}, "validation"),
        ("write_range", {"range": "Orders!A1", "values": [["=1+1"]]}, "validation"),
        ("set_formula", {"range": "Orders!D2", "formula": "B2*C2"}, "validation"),
        ("set_formula", {"range": "Orders!D2", "formula": "=SUM((B2)"}, "validation"),
        ("add_sheet", {"name": "Orders"}, "conflict"),
        ("add_sheet", {"name": "bad name!"}, "validation"),
        ("sort", {"range": "Orders!A1:D9", "by": "Nope"}, "validation"),
        (
            "create_pivot",
            {
                "source": "Orders!A1:D9",
                "rows": ["Item"],
                "columns": [],
                "values": "Qty",
                "aggregation": "median",
            },
            "validation",
        ),
        (
            "create_pivot",
            {
                "source": "Orders!A1:D9",
                "rows": ["Nope"],
                "columns": [],
                "values": "Qty",
                "aggregation": "sum",
            },
            "validation",
        ),
        ("filter", {"range": "Orders!A1:D9", "column": "Qty", "op": "~"}, "validation"),
    ],
)
def test_bad_calls_get_one_line_errors_and_change_nothing(
    driver: Make, tool: str, args: dict[str, object], kind: str
) -> None:
    d = driver(task_id("compute", rows=8))
    before = d.loop.run_until_complete(d.env.snapshot())
    out = d.write(tool, **args) if tool not in ("read_range", "filter") else d.call(tool, **args)
    assert not out["ok"] and out["error"]["kind"] == kind, out
    assert "\n" not in out["error"]["message"]
    assert d.loop.run_until_complete(d.env.snapshot())["world"] == before["world"]


def test_sort_orders_rows_and_refuses_formulas(driver: Make) -> None:
    d = driver(task_id("reconcile", rows=10))
    used = d.call("list_sheets")["content"]["sheets"][0]["used_range"]
    assert d.write("sort", range=used, by="Amount", descending=True)["ok"]
    amounts = [r[1] for r in d.call("read_range", range=used)["content"]["values"][1:]]
    assert amounts == sorted(amounts, reverse=True)
    f = driver(task_id("fix", rows=8))
    out = f.write("sort", range="Budget!A1:F10", by="Total")
    assert out["error"]["kind"] == "validation" and "formulas" in out["error"]["message"]


def test_filter_shows_matching_rows_without_changing_the_sheet(driver: Make) -> None:
    d = driver(task_id("pivot", rows=14))
    table = d.call("read_range", range="Sales!A1:D15")["content"]["values"]
    before = d.loop.run_until_complete(d.env.snapshot())
    got = d.call("filter", range="Sales!A1:D15", column="Revenue", op=">", value="4000")
    want = [i + 2 for i, row in enumerate(table[1:]) if row[3] > 4000]
    assert [r["row"] for r in got["content"]["rows"]] == want
    north = d.call("filter", range="Sales!A1:D15", column="A", op="=", value="north")
    assert all(r["values"][0] == "North" for r in north["content"]["rows"])
    assert d.loop.run_until_complete(d.env.snapshot()) == before


def test_list_sheets_shows_names_and_pivots_land_on_their_sheet(driver: Make) -> None:
    d = driver(task_id("compute", rows=8))
    listed = d.call("list_sheets")["content"]
    assert listed["names"] == {"prices": "Orders!$C$2:$C$9", "qty": "Orders!$B$2:$B$9"}
    out = d.write(
        "create_pivot",
        source="Orders!A1:C9",
        rows=["Item"],
        columns=[],
        values="Qty",
        aggregation="sum",
        target="ByItem",
    )
    assert out["ok"] and out["content"]["range"].startswith("ByItem!A1:B")
    grid = d.call("read_range", range=out["content"]["range"])["content"]
    assert grid["values"][0] == ["Item", "Sum of Qty"] and grid["values"][-1][0] == "Grand Total"
    assert grid["pivot_cells"] == ["PV1"]


def test_seeded_faults_fire_and_replay_identically() -> None:
    """The hardest level injects timeouts, stale reads and permission errors on reads and
    writes; the same (task, seed) gets the same faults, another seed others."""

    async def faults(seed: int) -> list[str]:
        env = SpreadsheetEnv()
        seen: list[str] = []
        tid = task_id("clean", rows=40)
        await env.reset(tid, seed)
        for i in range(120):
            result = await env.step(
                ToolCall(name="read_range", arguments={"range": "Raw!A1:C5"}, call_id=f"c{i}")
            )
            if result.info.get("fault"):
                seen.append(f"{i}:{result.info['fault']}")
            if result.terminated or result.truncated:
                await env.reset(tid, seed + 1000 * (i + 1))
        await env.close()
        return seen

    first = asyncio.run(faults(3))
    assert first == asyncio.run(faults(3))
    assert {f.split(":")[1] for f in first} == {"timeout", "stale", "permission_denied"}
    assert first != asyncio.run(faults(4))


def test_commit_timeout_retry_with_the_same_key_applies_once(driver: Make) -> None:
    d = driver(task_id("fix", rows=8))
    d.env.writes.faults = WorldFaults(forced=(("set_formula", 0, "commit_timeout"),))
    args = {"range": "Budget!F2", "formula": "=SUM(B2:E2)", "idempotency_key": "fix-f2"}
    first = d.call("set_formula", **args)
    assert first["error"]["kind"] == "timeout" and first["error"]["retryable"]
    again = d.call("set_formula", **args)
    assert again["ok"]
    assert d.env.log[-1].attrs.get("replay") is True
    other = d.call("set_formula", **{**args, "formula": "=1"})
    assert other["error"]["kind"] == "conflict"
