"""Formula evaluation by the ``formulas`` engine (a real Excel formula parser and function
library), over the workbook's cells, within the bounds of ``limits``.

``compile_formula`` parses a formula once per text (an LRU), admits it (size, nesting, the
function allow-list: ``limits.admit``) and wraps every function node of the compiled
formula with ``formula_budget.guard``. ``Recalc`` computes formula cells in dependency order
without recursion (an explicit stack, so a chain of a thousand cells is as safe as one):
each formula's inputs (cells, ranges, defined names, as the engine names them) are
resolved against the workbook, formula cells among them are computed first, and the
engine's function is called on the values, under one ``formula_budget.Budget`` per
recalculation. A reference cycle gives ``#REF!`` in every cell on it. What each formula
read is kept (``Recalc.reads``), so the verifier can follow a value back to its data. No
evaluator is written here: parsing, operators, coercion and the functions are the engine's.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import formulas
import numpy as np
import schedula
from formulas.functions import Error
from openpyxl.formula.translate import Translator
from openpyxl.utils.cell import get_column_letter

from gymforge.core.errors import ToolError
from gymforge.envs.spreadsheet import formula_budget, limits
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
    """A compiled formula and the names of its inputs, in call order; what evaluating its
    constant parts at compile time cost (``work``), and why it gave a limit's error."""

    fn: Any
    inputs: tuple[str, ...]
    work: int = 0
    reason: str | None = None
    exhausted: bool = False


class FormulaCache:
    """Compiled formulas by text, least recently used first out, bounded by the total
    length of the texts it holds (a compiled formula costs a few KB of memory per
    character of its text, so a count of entries bounds nothing)."""

    def __init__(self, max_text: int) -> None:
        self.max_text = max_text
        self.entries: OrderedDict[str, Compiled] = OrderedDict()
        self.text = 0
        self.misses = 0

    def get(self, text: str) -> Compiled:
        found = self.entries.get(text)
        if found is not None:
            self.entries.move_to_end(text)
            return found
        self.misses += 1
        compiled = _compile(text)
        self.entries[text] = compiled
        self.text += len(text)
        while self.text > self.max_text and len(self.entries) > 1:
            old, _ = self.entries.popitem(last=False)
            self.text -= len(old)
        return compiled

    def __contains__(self, text: str) -> bool:
        return text in self.entries


CACHE = FormulaCache(limits.CACHE_TEXT)


def compile_formula(text: str) -> Compiled:
    """The compiled formula (cached); a ``ToolError`` (validation) if the engine cannot
    parse it or ``limits`` refuses it."""
    return CACHE.get(text)


def _compile(text: str) -> Compiled:
    if not text.startswith("="):
        raise ToolError("validation", "a formula starts with '='")
    limits.screen(text)
    try:
        tokens, builder = formulas.Parser().ast(text)
    except Exception as err:  # the engine raises many kinds of parse errors
        raise ToolError("validation", f"formula {text[:60]!r}: {_one_line(err)}") from None
    limits.admit(text, tokens)
    for node_id, node in builder.dsp.function_nodes.items():
        node["function"] = formula_budget.guard(str(node_id), node["function"])
    # compiling evaluates the parts without references: under a budget of their own
    with formula_budget.active(formula_budget.Budget()) as budget:
        try:
            fn = builder.compile()
        except Exception as err:
            raise ToolError("validation", f"formula {text[:60]!r}: {_one_line(err)}") from None
    return Compiled(fn, tuple(fn.inputs), budget.total, budget.reason, budget.exhausted)


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
    return str(result)  # text (an XlError, a str subclass, renders as its code: #DIV/0!)


def fill_down(box: Box, formula: str) -> Iterator[tuple[int, int, str]]:
    """``(row, col, text)`` for every cell of ``box``: ``formula`` at the top-left cell,
    shifted elsewhere as a spreadsheet's fill-down does (``$`` anchors stay)."""
    origin = f"{get_column_letter(box.c1)}{box.r1}"
    for r, c in box.cells():
        here = f"{get_column_letter(c)}{r}"
        if here == origin:
            yield r, c, formula
        else:
            yield r, c, Translator(formula, origin=origin).translate_formula(here)


class Recalc:
    """One recalculation of a workbook. ``overrides`` replace stored values (the verifier's
    perturbed data), ``formulas`` replace or add formula cells (its reference formulas).
    ``reasons``: for cells whose value is a limit's error value, why; ``reads``: the boxes
    each computed formula read."""

    def __init__(
        self,
        book: Book,
        overrides: Mapping[Key, Value] | None = None,
        formulas: Mapping[Key, str] | None = None,
    ) -> None:
        self.book = book
        self.sheets = {s.upper(): s for s in book.sheets()}
        rows = book.db.all("SELECT * FROM cells")
        self.values: dict[Key, Value] = {
            (r["sheet"].upper(), r["row"], r["col"]): decode(r) for r in rows
        }
        self.formulas: dict[Key, str] = {
            (r["sheet"].upper(), r["row"], r["col"]): r["formula"] for r in rows if r["formula"]
        }
        self.values.update(overrides or {})
        for key in overrides or {}:
            self.formulas.pop(key, None)
        self.formulas.update(formulas or {})
        self.names = {k.upper(): v for k, v in book.names().items()}
        self.done: dict[Key, Value] = {}
        self.busy: set[Key] = set()
        self.budget = formula_budget.Budget()
        self.reasons: dict[Key, str] = {}
        self.reads: dict[Key, list[Box]] = {}
        self._named: dict[Key, list[Box | None]] = {}

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
        # a formula cell not done when read is on a cycle (``compute`` did its inputs first)
        v = self.done.get(key, CYCLE) if key in self.formulas else self.values.get(key)
        if v is None:
            return schedula.EMPTY
        if isinstance(v, str) and v in ERRORS:
            return Error.errors[v]
        return v

    def arg(self, box: Box | None) -> Any:
        if box is None:
            return Error.errors["#REF!"]
        self.budget.charge(box.height * box.width)
        if box.height == box.width == 1:
            return self.value((box.sheet, box.r1, box.c1))
        out = np.empty((box.height, box.width), dtype=object)
        for r, c in box.cells():
            out[r - box.r1, c - box.c1] = self.value((box.sheet, r, c))
        return out

    def inputs(self, key: Key) -> list[Box | None]:
        """The boxes formula cell ``key``'s inputs name (None: a missing name or sheet)."""
        boxes = self._named.get(key)
        if boxes is None:
            c = compile_formula(self.formulas[key])
            boxes = self._named[key] = [self.box(i, key[0]) for i in c.inputs]
            self.reads[key] = [b for b in boxes if b is not None]
        return boxes

    def _formula_deps(self, key: Key) -> list[Key]:
        """The formula cells ``key``'s inputs cover (charged to the recalculation)."""
        out: list[Key] = []
        for box in self.reads[key]:
            if box.height * box.width <= len(self.formulas):
                self.budget.charge(box.height * box.width)
                out += [
                    (box.sheet, r, c) for r, c in box.cells() if (box.sheet, r, c) in self.formulas
                ]
            else:
                self.budget.charge(len(self.formulas))
                out += [k for k in self.formulas if box.contains(*k)]
        return out

    def compute(self, key: Key) -> Value:
        """The value of formula cell ``key``, computing what it reads first."""
        stack = [key]
        while stack:
            k = stack[-1]
            if k in self.done:
                stack.pop()
                continue
            if k not in self.busy:
                self.busy.add(k)
                self.budget.start()
                try:
                    self.inputs(k)
                    pending = [
                        d
                        for d in self._formula_deps(k)
                        if d not in self.done and d not in self.busy
                    ]
                except formula_budget.Exhausted:
                    pending = []
                if pending:
                    stack += pending
                    continue
            stack.pop()
            self.done[k] = self._evaluate(k)
            self.busy.discard(k)
        return self.done[key]

    def _evaluate(self, key: Key) -> Value:
        budget = self.budget
        budget.start()
        c = compile_formula(self.formulas[key])
        result: Value
        if c.reason is not None:
            budget.reason = c.reason
        with formula_budget.active(budget):
            try:
                budget.charge(c.work)
                if c.exhausted:
                    budget.exhausted = True
                result = to_value(c.fn(*(self.arg(b) for b in self.inputs(key))))
            except Exception:  # the engine's functions raise on inputs Excel shows as #VALUE!
                result = "#VALUE!"
        if budget.exhausted:
            result = "#VALUE!"
        if budget.reason is not None and isinstance(result, str) and result in ERRORS:
            self.reasons[key] = budget.reason
        return result


@dataclass(frozen=True)
class Recalculation:
    """What a recalculation changed, and why cells hold a limit's error (``Sheet!A1``)."""

    changed: int
    errors: dict[str, str]


def recalc(book: Book) -> Recalculation:
    """Recompute every formula cell and store the values that changed."""
    run = Recalc(book)
    changed = 0
    for key in sorted(run.formulas):
        value = run.compute(key)
        if value != run.values.get(key) or type(value) is not type(run.values.get(key)):
            sheet, row, col = key
            book.put(run.sheets[sheet], row, col, value, formula=run.formulas[key])
            changed += 1
    errors = {_a1(run, k): why for k, why in sorted(run.reasons.items())}
    return Recalculation(changed, errors)


def _a1(run: Recalc, key: Key) -> str:
    sheet, row, col = key
    return f"{run.sheets.get(sheet, sheet)}!{get_column_letter(col)}{row}"


@dataclass(frozen=True)
class Trace:
    """One evaluation: its value, why it is a limit's error (if it is), the work it cost."""

    value: Value
    reason: str | None
    work: int


def trace(book: Book, formula: str, sheet: str) -> Trace:
    """Evaluate ``formula`` as a cell of ``sheet`` would (nothing is stored)."""
    key = (sheet.upper(), 0, 0)  # row 0 is no cell: nothing refers to it
    run = Recalc(book, formulas={key: formula})
    value = run.compute(key)
    return Trace(value, run.reasons.get(key), run.budget.total)


def evaluate(book: Book, formula: str, sheet: str) -> Value:
    """The value ``formula`` would have in a cell of ``sheet`` (nothing is stored)."""
    return trace(book, formula, sheet).value
