"""The "formula over the data" rule: a formula cell's value must follow the data it reads.

For each cell that must be a formula, the verifier follows what the formula read
(``Recalc.reads``, through other formula cells) down to the data cells (constants), then
recomputes on copies of the workbook in which those data cells are perturbed
(deterministically: numbers shifted by an offset derived from the cell and the round,
text suffixed, booleans flipped). In each round the cell's value must equal what the
task's own formula (its reference solution's, or the seed's where the solution keeps it)
computes on the same perturbed data; where the task has no
reference formula it must at least change. A formula that ignores its data
(``=IF(ISBLANK($A$1),v,v)``, ``=v+0*B2``) keeps its value and fails; so does one whose
references lead through more than ``MAX_VISITS`` cells (it cannot be shown to follow them).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from gymforge.envs.spreadsheet.cells import Value, same_value, split_sheet
from gymforge.envs.spreadsheet.engine import Key, Recalc, fill_down
from gymforge.envs.spreadsheet.truth import SheetTruth
from gymforge.envs.spreadsheet.workbook import Book

ROUNDS = 2
MAX_VISITS = 200_000
"""Cells one check may visit following references; a cell whose references lead further
cannot be shown to follow its data, and fails."""


def _key(cid: str) -> Key:
    from openpyxl.utils.cell import column_index_from_string, coordinate_from_string

    sheet, ref = split_sheet(cid)
    col, row = coordinate_from_string(ref)
    return (str(sheet).upper(), int(row), column_index_from_string(col))


def reference_formulas(book: Book, truth: SheetTruth) -> dict[Key, str]:
    """The task's own formulas, cell by cell: the seed workbook's, then those its reference
    solution enters (a seed formula the task asks to fix is replaced by the fix)."""
    out: dict[Key, str] = {
        (str(row["sheet"]).upper(), int(row["row"]), int(row["col"])): str(row["formula"])
        for row in truth.world.get("cells", [])
        if row.get("formula")
    }
    for step in truth.solution:
        if step.name == "set_formula":
            box = book.box(str(step.arguments["range"]))
            for r, c, text in fill_down(box, str(step.arguments["formula"])):
                out[(box.sheet.upper(), r, c)] = text
    return out


class TooFar(Exception):
    """Following a formula's references visited more than ``MAX_VISITS`` cells."""


@dataclass
class Walk:
    """The cells visited so far by one check (``MAX_VISITS`` in all)."""

    visits: int = 0

    def closure(self, run: Recalc, start: Key) -> tuple[set[Key], set[Key]]:
        """The formula cells and the non-empty constant cells that formula cell ``start``
        reads, directly or through other formulas (from the references, not evaluating)."""
        formulas: set[Key] = set()
        data: set[Key] = set()
        todo = [start]
        while todo:
            k = todo.pop()
            if k in formulas or k not in run.formulas:
                continue
            formulas.add(k)
            for box in run.inputs(k):
                if box is None:
                    continue
                self.visits += box.height * box.width
                if self.visits > MAX_VISITS:
                    raise TooFar(start)
                for r, c in box.cells():
                    cell = (box.sheet, r, c)
                    if cell in run.formulas:
                        todo.append(cell)
                    elif run.values.get(cell) is not None:
                        data.add(cell)
        return formulas, data


def perturb(cell: Key, value: Value, round_: int) -> Value:
    """A different value of the same type, fixed by the cell and the round."""
    digest = hashlib.sha256(f"{cell}|{round_}".encode()).digest()
    shift = 1 + digest[0] % 97
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + shift
    if isinstance(value, str):
        return f"{value}~{shift}"
    return value


def data_blind(book: Book, truth: SheetTruth, cells: Iterable[str]) -> list[str]:
    """The cells among ``cells`` (formula cells) whose value does not follow their data."""
    keys = {cid: _key(cid) for cid in cells}
    refs = reference_formulas(book, truth)
    agent = Recalc(book)
    reference: Recalc | None = None
    data: set[Key] = set()
    check: dict[str, Key] = {}
    walk = Walk()
    too_far: list[str] = []
    for cid, k in keys.items():
        try:
            formulas, reads = walk.closure(agent, k)
            if k in refs and all(agent.formulas[f] == refs[f] for f in formulas if f in refs):
                continue  # the task's own formulas all the way down: they follow the data
            reference = reference or Recalc(book, formulas=refs)
            data |= reads | walk.closure(reference, k)[1]
        except TooFar:
            too_far.append(cid)
            continue
        check[cid] = k
    moved = dict.fromkeys(check, False)
    wrong: set[str] = set()
    for round_ in range(ROUNDS):
        changed: Mapping[Key, Value] = {
            k: perturb(k, agent.values[k], round_) for k in sorted(data)
        }
        got_run = Recalc(book, overrides=changed)
        want_run = Recalc(book, overrides=changed, formulas=refs)
        for cid, k in check.items():
            got = got_run.compute(k)
            moved[cid] = moved[cid] or not same_value(got, agent.values.get(k))
            if k in refs and not same_value(got, want_run.compute(k)):
                wrong.add(cid)
    blind = {cid for cid, k in check.items() if cid in wrong or (k not in refs and not moved[cid])}
    return [cid for cid in keys if cid in blind or cid in too_far]
