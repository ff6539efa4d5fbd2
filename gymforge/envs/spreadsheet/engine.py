"""Formula evaluation by the ``formulas`` engine (a real Excel formula parser and function
library), over the workbook's cells.

``compile_formula`` parses and compiles a formula once per text (an LRU). ``recalc``
recomputes every formula cell of the workbook in dependency order: each formula's inputs
(cells, ranges, defined names, as the engine names them) are resolved against the
workbook, formula cells among them are computed first, and the engine's function is
called on the values. A reference cycle gives ``#REF!`` in every cell on it. No evaluator
is written here: parsing, operators, coercion and the functions are the engine's.
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass
from typing import Any

import formulas
import numpy as np
import schedula
from formulas.functions import Error

from gymforge.core.errors import ToolError
from gymforge.envs.spreadsheet.cells import (
    ERRORS,
    Box,
    Value,
    clean_number,
    decode,
    parse_box,
    split_sheet,
)
from gymforge.envs.spreadsheet.workbook import Book

CYCLE = "#REF!"
Key = tuple[str, int, int]  # (upper-case sheet, row, col)


@dataclass(frozen=True)
class Compiled:
    """A compiled formula and the names of its inputs, in call order."""

    fn: Any
    inputs: tuple[str, ...]


@functools.lru_cache(maxsize=8192)
def compile_formula(text: str) -> Compiled:
    """The compiled formula; a ``ToolError`` (validation) if the engine cannot parse it."""
    if not text.startswith("="):
        raise ToolError("validation", "a formula starts with '='")
    try:
        fn = formulas.Parser().ast(text)[1].compile()
    except Exception as err:  # the engine raises many kinds of parse errors
        raise ToolError("validation", f"formula {text[:60]!r}: {_one_line(err)}") from None
    return Compiled(fn, tuple(fn.inputs))


def _one_line(err: Exception) -> str:
    """The engine's message on one line (some of its errors keep a ``%s`` template)."""
    msg = str(err.args[0]) if err.args else type(err).__name__
    if "%s" in msg and len(err.args) > 1:
        with contextlib.suppress(TypeError):
            msg = msg % err.args[1:]
    return " ".join(msg.split())[:200]


def references(text: str) -> tuple[str, ...]:
    """The formula's inputs (cells, ranges, names); empty for a constant formula."""
    return compile_formula(text).inputs


def to_value(result: Any) -> Value:
    """The engine's result as a cell value (the top-left one for an array result)."""
    while isinstance(result, np.ndarray):
        result = result.flat[0] if result.size else None
    if result is schedula.EMPTY or result is None:
        return 0
    if isinstance(result, np.bool_ | bool):
        return bool(result)
    if isinstance(result, np.integer | np.floating | int | float):
        return clean_number(float(result))
    if isinstance(result, str):
        return result
    return str(result)  # an XlError renders as its code, e.g. #DIV/0!


class _Recalc:
    def __init__(self, book: Book) -> None:
        self.book = book
        self.sheets = {s.upper(): s for s in book.sheets()}
        rows = book.db.all("SELECT * FROM cells")
        self.values: dict[Key, Value] = {
            (r["sheet"].upper(), r["row"], r["col"]): decode(r) for r in rows
        }
        self.formulas: dict[Key, str] = {
            (r["sheet"].upper(), r["row"], r["col"]): r["formula"] for r in rows if r["formula"]
        }
        self.names = {k.upper(): v for k, v in book.names().items()}
        self.done: dict[Key, Value] = {}
        self.busy: set[Key] = set()

    def box(self, ref: str, home: str) -> Box | None:
        """The box an input names; None for a name or sheet that does not exist."""
        sheet, part = split_sheet(ref)
        if sheet is None and part.upper() in self.names:
            return self.box(self.names[part.upper()], home)
        sheet = (sheet or home).upper()
        if sheet not in self.sheets:
            return None
        if ":" in part and not any(ch.isdigit() for ch in part):  # whole columns: B:D
            part = part.replace(":", "1:") + "1000"
        try:
            return parse_box(part, sheet)
        except ToolError:
            return None

    def value(self, key: Key) -> Any:
        v = self.compute(key) if key in self.formulas else self.values.get(key)
        if v is None:
            return schedula.EMPTY
        if isinstance(v, str) and v in ERRORS:
            return Error.errors[v]
        return v

    def arg(self, ref: str, home: str) -> Any:
        box = self.box(ref, home)
        if box is None:
            return Error.errors["#REF!"]
        if box.height == box.width == 1:
            return self.value((box.sheet, box.r1, box.c1))
        out = np.empty((box.height, box.width), dtype=object)
        for r, c in box.cells():
            out[r - box.r1, c - box.c1] = self.value((box.sheet, r, c))
        return out

    def compute(self, key: Key) -> Value:
        if key in self.done:
            return self.done[key]
        if key in self.busy:
            return CYCLE
        self.busy.add(key)
        c = compile_formula(self.formulas[key])
        try:
            result = to_value(c.fn(*(self.arg(i, key[0]) for i in c.inputs)))
        except Exception:  # the engine's functions raise on inputs Excel shows as #VALUE!
            result = "#VALUE!"
        self.busy.discard(key)
        if key in self.done:  # set by a cycle through this cell
            return self.done[key]
        self.done[key] = result
        return result


def recalc(book: Book) -> int:
    """Recompute every formula cell and store the values that changed; returns how many."""
    run = _Recalc(book)
    changed = 0
    for key in sorted(run.formulas):
        value = run.compute(key)
        if value != run.values.get(key) or type(value) is not type(run.values.get(key)):
            sheet, row, col = key
            book.put(run.sheets[sheet], row, col, value, formula=run.formulas[key])
            changed += 1
    return changed


def evaluate(book: Book, formula: str, sheet: str) -> Value:
    """The value ``formula`` would have in a cell of ``sheet`` (nothing is stored)."""
    run = _Recalc(book)
    key = (sheet.upper(), 0, 0)  # row 0 is no cell: nothing refers to it
    run.formulas[key] = formula
    return run.compute(key)
