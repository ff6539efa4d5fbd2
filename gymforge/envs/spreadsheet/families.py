"""The five spreadsheet task families, seeded. Truth is computed here in plain Python (no
formula engine), so generating a task costs well under a millisecond; seed formula cells
carry the values their formulas compute, which the engine reproduces (tested).

- ``clean``: tidy a messy export into a new sheet (trim, Title Case, numbers from text,
  blank rows and duplicates dropped, sorted), or reshape a wide table into a long one;
- ``compute``: fill a column and a summary with formulas (hard-coded values fail);
- ``pivot``: build a pivot table and answer a question from it;
- ``reconcile``: list the records on which two sheets disagree (held out);
- ``fix``: repair the broken formulas of a budget.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from gymforge.envs.spreadsheet.build import (
    NOW,
    QUARTERS,
    REGIONS,
    Layout,
    new_sheet_truth,
    span,
    step,
    whole,
)
from gymforge.envs.spreadsheet.cells import Value, addr
from gymforge.envs.spreadsheet.pivot import LABEL, TOTAL, pivot_grid
from gymforge.envs.spreadsheet.tidy import clean
from gymforge.envs.spreadsheet.truth import PivotTruth, SheetTruth
from gymforge.tasks import ChoiceKnob, IntKnob, ParamSpace, Split
from gymforge.world.tasks import WorldFamily

PRODUCTS = ["Widget", "Gadget", "Gizmo", "Sprocket", "Flange"]
ITEMS = ["Bolt", "Nut", "Washer", "Hinge", "Bracket", "Spring", "Clamp", "Rivet", "Gear"]
DEPTS = ["Sales", "Support", "Research", "Finance", "Legal", "Ops", "HR", "IT", "Design"]


@dataclass
class SheetFamily(WorldFamily[SheetTruth]):
    kind: str = "clean"

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, SheetTruth]:
        return BUILDERS[self.kind](params["rows"], r)


# ---- compute with formulas -------------------------------------------------------------
STATS = {"AVERAGE": "average", "MAX": "highest", "MIN": "lowest"}


def compute(n: int, r: random.Random) -> tuple[str, SheetTruth]:
    book = Layout()
    grid: list[list[Value]] = [["Item", "Qty", "Price", "Total"]]
    qty = [r.randrange(1, 41) for _ in range(n)]
    price = [r.randrange(100, 20_000) / 100 for _ in range(n)]
    for i in range(n):
        grid.append([f"{r.choice(ITEMS)}-{100 + i}", qty[i], price[i], None])
    book.sheet("Orders", grid)
    end = n + 1
    book.names = {"prices": f"Orders!$C$2:$C${end}", "qty": f"Orders!$B$2:$B${end}"}
    stat = r.choice(sorted(STATS))
    above = r.random() < 0.5
    cut = r.randrange(8, 33)
    op = ">" if above else "<"
    book.sheet(
        "Summary",
        [["Total revenue"], [f"{STATS[stat].capitalize()} price"], [f"Orders with Qty {op} {cut}"]],
    )
    totals = [q * p for q, p in zip(qty, price, strict=True)]
    pick = {"AVERAGE": sum(price) / n, "MAX": max(price), "MIN": min(price)}[stat]
    count = sum((q > cut) if above else (q < cut) for q in qty)
    targets: dict[str, Value] = {addr("Orders", i + 2, 4): t for i, t in enumerate(totals)}
    targets |= {"Summary!B1": sum(totals), "Summary!B2": pick, "Summary!B3": count}
    prompt = (
        f"On sheet Orders (A1:D{end}: Item, Qty, Price, Total) fill Total (D2:D{end}) with "
        "formulas computing Qty times Price for each row. On sheet Summary put formulas in "
        f"B1 (the sum of all order totals), B2 (the {STATS[stat]} price; the defined name "
        f"prices covers the Price column) and B3 (how many orders have Qty {op} {cut}; the "
        "defined name qty covers the Qty column). Every one of these cells must be a formula "
        "over the data, not a typed-in number. Change nothing else."
    )
    return prompt, SheetTruth(
        world=book.rows(),
        now=NOW,
        targets=targets,
        formula_cells=sorted(targets),
        allowed=[f"Orders!D2:D{end}", "Summary!B1:B3"],
        solution=[
            step("read_range", range=f"Orders!A1:D{end}"),
            step("set_formula", range=f"Orders!D2:D{end}", formula="=B2*C2"),
            step("set_formula", range="Summary!B1", formula=f"=SUM(Orders!D2:D{end})"),
            step("set_formula", range="Summary!B2", formula=f"={stat}(prices)"),
            step("set_formula", range="Summary!B3", formula=f'=COUNTIF(qty,"{op}{cut}")'),
        ],
        decoy="Orders!B2",
    )


# ---- a pivot that answers a question ------------------------------------------------------
def pivot(n: int, r: random.Random) -> tuple[str, SheetTruth]:
    book = Layout()
    sales: list[list[Value]] = [["Region", "Product", "Quarter", "Revenue"]]
    for _ in range(n):
        sales.append(
            [
                r.choice(REGIONS),
                r.choice(PRODUCTS),
                r.choice(QUARTERS),
                r.randrange(5_000, 900_000) / 100,
            ]
        )
    book.sheet("Sales", sales)
    book.sheet("Answer", [["Answer"]])
    source = f"Sales!A1:D{n + 1}"
    field = r.choice(["Region", "Product"])
    columns = ["Quarter"] if r.random() < 0.6 else []
    how = r.choice(["sum", "average", "max"])
    grid = pivot_grid(sales, [field], columns, "Revenue", how)
    col = r.randrange(1, len(grid[0]) - 1) if columns else 1
    scored = [(row[col], str(row[0])) for row in grid[1:-1] if row[col] is not None]
    best = min(scored, key=lambda t: (-float(t[0]), t[1]))[1]  # type: ignore[arg-type]
    where = f" in {grid[0][col]}" if columns else ""
    layout = f"{field} as rows, Quarter as columns" if columns else f"{field} as rows, no columns"
    prompt = (
        f"From the sales table Sales!A1:D{n + 1}, create a pivot table on a new sheet named "
        f"Pivot with {layout} and the {how} of Revenue as values (aggregation {how}). Then, "
        f"reading the pivot, write into Answer!B1 the {field.lower()} with the highest "
        f"{LABEL[how].lower()} of Revenue{where} (on a tie, the first in alphabetical "
        "order). Change nothing else."
    )
    spec = PivotTruth(
        sheet="Pivot",
        source=source,
        rows=[field],
        columns=columns,
        value_field="Revenue",
        aggregation=how,
        grid=grid,
    )
    assert grid[-1][0] == TOTAL
    return prompt, SheetTruth(
        world=book.rows(),
        now=NOW,
        targets={"Answer!B1": best},
        allowed=[whole("Pivot"), "Answer!B1"],
        new_sheets=["Pivot"],
        pivot=spec,
        solution=[
            step("read_range", range=source),
            step(
                "create_pivot",
                source=source,
                rows=[field],
                columns=columns,
                values="Revenue",
                aggregation=how,
                target="Pivot",
            ),
            step("read_range", range=span("Pivot", 1, 1, len(grid[0]), len(grid))),
            step("write_range", range="Answer!B1", values=[[best]]),
        ],
        decoy="Sales!D2",
    )


# ---- reconcile two sheets ---------------------------------------------------------------
def reconcile(n: int, r: random.Random) -> tuple[str, SheetTruth]:
    refs = [f"TX-{1000 + i * 7 + r.randrange(7)}" for i in range(n)]
    ledger = {ref: r.randrange(1_000, 300_000) for ref in refs}
    bank = dict(ledger)
    picks = r.sample(refs, max(3, n // 5))
    for i, ref in enumerate(picks):
        kind = i % 3
        if kind == 0:
            bank[ref] += r.choice((-1, 1)) * r.randrange(1, 5_000)
        elif kind == 1:
            del bank[ref]
        else:
            del ledger[ref]
    book = Layout()
    for name, side in (("Ledger", ledger), ("Bank", bank)):
        keys = list(side)
        r.shuffle(keys)
        rows: list[list[Value]] = [["Ref", "Amount"]]
        rows += [[k, side[k] / 100] for k in keys]
        book.sheet(name, rows)
    out: list[list[Value]] = [["Ref", "Ledger", "Bank", "Difference"]]
    for ref in sorted(picks):
        lc, bc = ledger.get(ref), bank.get(ref)
        diff = ((lc or 0) - (bc or 0)) / 100
        out.append([ref, None if lc is None else lc / 100, None if bc is None else bc / 100, diff])
    prompt = (
        f"Sheets Ledger (A1:B{len(ledger) + 1}) and Bank (A1:B{len(bank) + 1}) list "
        "transactions by Ref. Make a new sheet named Recon with the header Ref, Ledger, Bank, "
        "Difference in A1:D1 and, from row 2, one row per Ref whose amounts differ or that "
        "appears on only one sheet, sorted by Ref: the Ledger and Bank amounts (empty where "
        "the Ref is missing) and Difference = Ledger - Bank, a missing amount counting as 0, "
        "in whole cents. Change nothing else."
    )
    return prompt, new_sheet_truth(
        book,
        "Recon",
        out,
        [f"Ledger!A1:B{len(ledger) + 1}", f"Bank!A1:B{len(bank) + 1}"],
        "Bank!B2",
    )


# ---- fix a broken formula -------------------------------------------------------------------
def fix(n: int, r: random.Random) -> tuple[str, SheetTruth]:
    book = Layout()
    depts = r.sample(DEPTS, min(n, len(DEPTS)))
    depts += [f"Team {i}" for i in range(1, n - len(depts) + 1)]
    grid: list[list[Value]] = [["Dept", *QUARTERS, "Total"]]
    amounts = {row: [1_000 + int(r.random() * 49_000) for _ in QUARTERS] for row in range(2, n + 2)}
    for row, d in enumerate(depts, 2):
        grid.append([d, *amounts[row], None])
    book.sheet("Budget", grid)
    end = n + 1
    book.put("Budget", end + 1, 1, "Total")

    def quarters(row: int) -> list[int]:
        return amounts[row]

    good = {row: f"=SUM(B{row}:E{row})" for row in range(2, end + 1)}
    broken_rows = r.sample(range(2, end + 1), r.randrange(1, 3 if n < 20 else 4))
    formula = dict(good)
    values = {row: sum(quarters(row)) for row in good}
    for row in sorted(broken_rows):
        kind = r.randrange(3)
        if kind == 0:  # the range stops a column short
            formula[row], values[row] = f"=SUM(B{row}:D{row})", sum(quarters(row)[:3])
        elif kind == 1:  # the neighbouring row's range
            other = row + 1 if row < end else row - 1
            formula[row], values[row] = f"=SUM(B{other}:E{other})", sum(quarters(other))
        else:  # one quarter left out of a hand-written sum
            skip = r.randrange(4)
            cols = [c for j, c in enumerate("BCDE") if j != skip]
            formula[row] = "=" + "+".join(f"{c}{row}" for c in cols)
            values[row] = sum(v for j, v in enumerate(quarters(row)) if j != skip)
    right_total = sum(sum(quarters(row)) for row in good)
    short = r.random() < 0.5
    total_formula = f"=SUM(F2:F{end - 1})" if short else f"=SUM(F2:F{end})"
    rows_summed = range(2, end) if short else range(2, end + 1)
    for row in good:
        book.put("Budget", row, 6, values[row], formula[row])
    book.put("Budget", end + 1, 6, sum(values[row] for row in rows_summed), total_formula)
    targets: dict[str, Value] = {addr("Budget", row, 6): sum(quarters(row)) for row in good}
    targets[addr("Budget", end + 1, 6)] = right_total
    plan = [step("read_range", range=f"Budget!A1:F{end + 1}")]
    for row in sorted(broken_rows):
        plan.append(step("set_formula", range=f"Budget!F{row}", formula=good[row]))
    if short:
        plan.append(step("set_formula", range=f"Budget!F{end + 1}", formula=f"=SUM(F2:F{end})"))
    prompt = (
        f"Sheet Budget (A1:F{end + 1}) has one row per department with Q1-Q4 in B:E and a "
        f"Total in F, and a grand total in F{end + 1}. Some Total formulas are wrong. Fix them "
        f"with formulas so that every F2:F{end} is the sum of its own row's Q1-Q4 and "
        f"F{end + 1} is the sum of all department totals. Change nothing else."
    )
    return prompt, SheetTruth(
        world=book.rows(),
        now=NOW,
        targets=targets,
        formula_cells=sorted(targets),
        allowed=[f"Budget!F2:F{end + 1}"],
        solution=plan,
        decoy="Budget!B2",
    )


BUILDERS = {"clean": clean, "compute": compute, "pivot": pivot, "reconcile": reconcile, "fix": fix}
LEVELS = {
    1: ParamSpace({"rows": IntKnob(8, 14), "fault_rate": ChoiceKnob((0.0,))}),
    2: ParamSpace({"rows": IntKnob(16, 28), "fault_rate": ChoiceKnob((0.04,))}),
    3: ParamSpace({"rows": IntKnob(30, 48), "fault_rate": ChoiceKnob((0.08,))}),
}
FAMILIES = [SheetFamily(f"spreadsheet.{kind}", 1, LEVELS, kind=kind) for kind in BUILDERS]
HELD_OUT_FAMILY = "spreadsheet.reconcile"
SPLIT = Split(families=frozenset({HELD_OUT_FAMILY}))
TRAIN_FAMILIES = tuple(f.name for f in FAMILIES if f.name != HELD_OUT_FAMILY)
