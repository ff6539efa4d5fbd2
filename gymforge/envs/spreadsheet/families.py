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

from gymforge.envs.spreadsheet.build import Layout, span, targets_of, whole
from gymforge.envs.spreadsheet.cells import Value, addr
from gymforge.envs.spreadsheet.pivot import LABEL, TOTAL, pivot_grid
from gymforge.envs.spreadsheet.truth import PivotTruth, SheetTruth, Step
from gymforge.tasks import ChoiceKnob, IntKnob, ParamSpace, Split
from gymforge.world.tasks import WorldFamily

FIRST = ["ana", "ben", "chen", "dara", "eli", "fay", "gus", "hana", "ivo", "jun", "kai", "lea"]
LAST = ["lopez", "smith", "okafor", "novak", "berg", "tanaka", "moreau", "silva", "kowal"]
REGIONS = ["North", "South", "East", "West", "Central"]
PRODUCTS = ["Widget", "Gadget", "Gizmo", "Sprocket", "Flange"]
QUARTERS = ["Q1", "Q2", "Q3", "Q4"]
ITEMS = ["Bolt", "Nut", "Washer", "Hinge", "Bracket", "Spring", "Clamp", "Rivet", "Gear"]
DEPTS = ["Sales", "Support", "Research", "Finance", "Legal", "Ops", "HR", "IT", "Design"]
NOW = "2025-03-03T09:00:00Z"


def step(tool: str, **arguments: Any) -> Step:
    return Step(name=tool, arguments=arguments)


@dataclass
class SheetFamily(WorldFamily[SheetTruth]):
    kind: str = "clean"

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, SheetTruth]:
        return BUILDERS[self.kind](params["rows"], r)


# ---- clean and reshape ------------------------------------------------------------------
def _pick(r: random.Random, k: int) -> int:
    """A uniform integer in ``[0, k)`` (``r.random()`` costs a third of ``randrange``)."""
    return int(r.random() * k)


def _mess(text: str, r: random.Random) -> str:
    """``text`` as a careless export has it: one of four casings, 0-2 spaces around it, and
    its words maybe two spaces apart (one draw decides all four)."""
    x = int(r.random() * 72)
    style, lead, trail, gap = x % 4, (x // 4) % 3, (x // 12) % 3, x // 36
    if style == 1:
        text = text.upper()
    elif style == 2:
        text = text.lower()
    elif style == 3:
        text = " ".join(w[:1].lower() + w[1:].upper() for w in text.split(" "))
    if gap:
        text = text.replace(" ", "  ")
    return " " * lead + text + " " * trail


def _amount_text(cents: int, r: random.Random) -> Value:
    style = _pick(r, 4)
    if style == 0:
        return cents / 100
    if style == 1:
        return f"{cents // 100:,}.{cents % 100:02d}"
    if style == 2:
        return f" ${cents // 100:,}.{cents % 100:02d}"
    return f"{cents // 100}.{cents % 100:02d} "


def clean(n: int, r: random.Random) -> tuple[str, SheetTruth]:
    """Two shapes of tidying: four tasks in ten reshape a wide table (``unpivot``), the
    rest clean a messy export."""
    if r.random() < 0.4:
        return unpivot(n, r)
    people = r.sample([f"{f} {s}" for f in FIRST for s in LAST], n)
    cents = r.sample(range(1_000, 500_000), n)
    records = [
        (p.title(), REGIONS[_pick(r, len(REGIONS))], c) for p, c in zip(people, cents, strict=True)
    ]
    raw: list[list[Value]] = [["Name", "Region", "Amount"]]
    for rec in records:
        copies = 2 if r.random() < 0.12 else 1
        for _ in range(copies):
            if r.random() < 0.1:
                raw.append([None, None, None])
            raw.append([_mess(rec[0], r), _mess(rec[1], r), _amount_text(rec[2], r)])
    book = Layout()
    book.sheet("Raw", raw)
    ordered = sorted(records, key=lambda t: (-t[2], t[0]))
    out: list[list[Value]] = [["Name", "Region", "Amount"]]
    out += [[name, region, c / 100] for name, region, c in ordered]
    last = len(raw)
    prompt = (
        f"Sheet Raw (A1:C{last}) is a messy export of sales. Make a new sheet named Clean with "
        "the header Name, Region, Amount in A1:C1 and, from row 2, one row per distinct record "
        "of Raw: Name and Region trimmed, inner runs of spaces collapsed to one and in Title "
        "Case, Amount as a number (no $ or thousands separators), blank rows dropped, rows "
        "that are the same record after cleaning kept once. Sort by Amount, largest first. "
        "Change nothing else."
    )
    return prompt, SheetTruth(
        world=book.rows(),
        now=NOW,
        targets=targets_of("Clean", out),
        allowed=[whole("Clean")],
        new_sheets=["Clean"],
        exact_sheets=["Clean"],
        solution=[
            step("read_range", range=f"Raw!A1:C{last}"),
            step("add_sheet", name="Clean"),
            step("write_range", range=span("Clean", 1, 1, 3, len(out)), values=out),
        ],
        decoy="Raw!A2",
    )


PLACES = ["North", "South", "East", "West", "Harbor", "Hill", "Lake", "Park"]
OUTLETS = ["Mall", "Plaza", "Market", "Depot", "Outlet", "Center"]


def unpivot(n: int, r: random.Random) -> tuple[str, SheetTruth]:
    """Reshape: a wide table (one column per quarter) into a long one (a row per value)."""
    stores = r.sample([f"{p} {o}" for p in PLACES for o in OUTLETS], n)
    wide: list[list[Value]] = [["Store", *QUARTERS]]
    long: list[tuple[str, str, Value]] = []
    for store in stores:
        row: list[Value] = [_mess(store, r)]
        for q in QUARTERS:
            v: Value = None if r.random() < 0.15 else _pick(r, 90_000) / 100 + 100
            row.append(v)
            if v is not None:
                long.append((store, q, v))
        wide.append(row)
    book = Layout()
    book.sheet("Wide", wide)
    out: list[list[Value]] = [["Store", "Quarter", "Revenue"]]
    out += [[s, q, v] for s, q, v in sorted(long, key=lambda t: (t[0], t[1]))]
    prompt = (
        f"Sheet Wide (A1:E{n + 1}) has one row per store and one Revenue column per quarter. "
        "Reshape it into a new sheet named Long with the header Store, Quarter, Revenue in "
        "A1:C1 and, from row 2, one row per non-empty quarter cell of Wide: the store name "
        "trimmed, inner runs of spaces collapsed to one and in Title Case, the quarter (Q1 "
        "to Q4, from the header) and the revenue. Sort by Store, then Quarter. Change "
        "nothing else."
    )
    return prompt, SheetTruth(
        world=book.rows(),
        now=NOW,
        targets=targets_of("Long", out),
        allowed=[whole("Long")],
        new_sheets=["Long"],
        exact_sheets=["Long"],
        solution=[
            step("read_range", range=f"Wide!A1:E{n + 1}"),
            step("add_sheet", name="Long"),
            step("write_range", range=span("Long", 1, 1, 3, len(out)), values=out),
        ],
        decoy="Wide!B2",
    )


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
    return prompt, SheetTruth(
        world=book.rows(),
        now=NOW,
        targets=targets_of("Recon", out),
        allowed=[whole("Recon")],
        new_sheets=["Recon"],
        exact_sheets=["Recon"],
        solution=[
            step("read_range", range=f"Ledger!A1:B{len(ledger) + 1}"),
            step("read_range", range=f"Bank!A1:B{len(bank) + 1}"),
            step("add_sheet", name="Recon"),
            step("write_range", range=span("Recon", 1, 1, 4, len(out)), values=out),
        ],
        decoy="Bank!B2",
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
