"""The ``clean`` family's tasks: tidy a messy export, or reshape a wide table into a long
one. Truth in plain Python, drawing only from the task's RNG."""

from __future__ import annotations

import random

from gymforge.envs.spreadsheet.build import (
    QUARTERS,
    REGIONS,
    Layout,
    new_sheet_truth,
)
from gymforge.envs.spreadsheet.cells import Value
from gymforge.envs.spreadsheet.truth import SheetTruth

FIRST = ["ana", "ben", "chen", "dara", "eli", "fay", "gus", "hana", "ivo", "jun", "kai", "lea"]
LAST = ["lopez", "smith", "okafor", "novak", "berg", "tanaka", "moreau", "silva", "kowal"]


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
    return prompt, new_sheet_truth(book, "Clean", out, [f"Raw!A1:C{last}"], "Raw!A2")


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
    return prompt, new_sheet_truth(book, "Long", out, [f"Wide!A1:E{n + 1}"], "Wide!B2")
