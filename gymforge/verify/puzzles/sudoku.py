"""Sudoku (4x4 and 9x9): complete the grid so every row, column and box holds each digit once.

Generation: a random valid full grid (the standard pattern grid under a random relabelling
of digits, shuffles of rows within bands, of bands, of columns within stacks, of stacks,
and an optional transpose, all drawn from the task's RNG), then the ``givens`` knob decides
how many cells stay visible. **Uniqueness is not required and not searched for**: the
verifier accepts *any* complete, consistent grid that agrees with the givens, so a puzzle
with several completions is still a fair task (the generator's full grid is one of them and
is the oracle). Skipping the uniqueness search keeps generation at thousands of tasks/s.

Answer format: the rows top to bottom, each as its digits left to right, separated by ``/``
(spaces and commas inside a row are ignored). Version 2 also reads the common grid layouts
(``parse_layout``): rows on separate lines after ``Answer:``, digits separated by spaces or
commas, ``|`` and ``-``/``+`` box rules, brackets (``[[1,2,...],...]``), or all cells in one
run; ``.``, ``0``, ``_``, ``?`` and ``*`` are blanks (an answer with a blank fails as
``incomplete``).

Dataset rows (``from_row``): ``puzzle``, the grid to complete (16 or 81 cells) in any of
those layouts or as a list of rows of integers with 0 for a blank.

Failure reasons: ``parse_error``, ``incomplete``, ``givens_changed``, ``duplicate_in_row``,
``duplicate_in_column``, ``duplicate_in_box``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any

from gymforge.tasks import ChoiceKnob, IntKnob, ParamSpace
from gymforge.verify.puzzles.answer import Outcome, answer_instruction, fail, ok
from gymforge.verify.puzzles.base import PuzzleFamily, PuzzleTruth
from gymforge.verify.puzzles.rows import field

BLANK = "."
BLANKS = ".0_?*"
_IGNORED = str.maketrans("", "", " \t,")
_DECORATION = str.maketrans("", "", " \t,|[]+")
_RULE = re.compile(r"[-+=|\s]+")


def full_grid(size: int, r: random.Random) -> list[list[int]]:
    """A random valid ``size`` x ``size`` grid (``size`` = 4 or 9; boxes are square)."""
    b = 2 if size == 4 else 3

    def order() -> list[int]:
        groups = r.sample(range(b), b)
        return [g * b + i for g in groups for i in r.sample(range(b), b)]

    rows, cols, digits = order(), order(), r.sample(range(1, size + 1), size)
    grid = [[digits[(b * (y % b) + y // b + x) % size] for x in cols] for y in rows]
    if r.random() < 0.5:
        grid = [list(col) for col in zip(*grid, strict=True)]
    return grid


def _divider(size: int) -> str:
    b = 2 if size == 4 else 3
    return "-+-".join(["-" * (2 * b - 1)] * b)


def render(givens: str, size: int) -> str:
    """The grid as text: ``.`` for blanks, ``|`` and ``-`` lines between boxes."""
    b = 2 if size == 4 else 3
    lines = []
    for y in range(size):
        if y and y % b == 0:
            lines.append(_divider(size))
        row = givens[y * size : (y + 1) * size]
        lines.append(" | ".join(" ".join(row[x : x + b]) for x in range(0, size, b)))
    return "\n".join(lines)


def parse_grid(answer: str, size: int) -> list[str] | str:
    """The rows of ``answer`` as strings, or an error message."""
    rows = answer.strip().translate(_IGNORED).split("/")
    if len(rows[-1]) == size + 1 and rows[-1].endswith("."):  # a sentence's full stop
        rows[-1] = rows[-1][:-1]
    if len(rows) != size:
        return f"expected {size} rows separated by '/', got {len(rows)}"
    for y, row in enumerate(rows):
        if len(row) != size:
            return f"row {y + 1} has {len(row)} cells, expected {size}"
    return rows


def grid_rows(text: str) -> list[str]:
    """The non-empty rows of a grid in any common layout: lines (or ``/``-separated parts)
    without their decoration, box-rule lines (``-+-``, ``===``) left out."""
    lines = [ln for part in text.strip().splitlines() for ln in part.split("/")]
    rows = [ln.translate(_DECORATION) for ln in lines if not _RULE.fullmatch(ln or " ")]
    return [r for r in rows if r]


def parse_layout(answer: str, size: int) -> list[str] | str:
    """The rows of a grid written in any common layout (see the module doc), or an error
    message. Cells are single characters; blanks are kept as written."""
    rows = grid_rows(answer)
    cells = "".join(rows)
    if len(cells) == size * size + 1 and cells.endswith("."):  # a sentence's full stop
        cells, rows[-1] = cells[:-1], rows[-1][:-1]
    if len(rows) == size and all(len(r) == size for r in rows):
        return rows
    if len(cells) == size * size:
        return [cells[i : i + size] for i in range(0, size * size, size)]
    return f"expected {size} rows of {size} cells, got {len(cells)} cells in {len(rows)} rows"


def conflict(
    rows: list[str], size: int, ignore: str | None = None
) -> tuple[str, dict[str, int]] | None:
    """The first repeated digit (rows first, then columns, then boxes) as
    ``(reason, facts)``, or None when every unit holds distinct digits (cells equal to
    ``ignore``, the blanks of a puzzle, never count as repeats)."""
    b = 2 if size == 4 else 3
    units: list[tuple[str, int, list[tuple[int, int]]]] = []
    for i in range(size):
        units.append(("duplicate_in_row", i, [(i, x) for x in range(size)]))
    for i in range(size):
        units.append(("duplicate_in_column", i, [(y, i) for y in range(size)]))
    for i in range(size):
        by, bx = divmod(i, b)
        cells = [(by * b + dy, bx * b + dx) for dy in range(b) for dx in range(b)]
        units.append(("duplicate_in_box", i, cells))
    for reason, index, cells in units:
        seen: set[str] = set()
        for y, x in cells:
            if rows[y][x] == ignore:
                continue
            if rows[y][x] in seen:
                return reason, {"unit": index + 1, "row": y + 1, "col": x + 1}
            seen.add(rows[y][x])
    return None


class SudokuTruth(PuzzleTruth):
    """The grid as ``size * size`` characters, ``.`` for a blank; ``solution`` for
    generated tasks only."""

    size: int
    givens: str
    solution: str | None = None


class SudokuFamily(PuzzleFamily[SudokuTruth]):
    heldout = {"fewest_givens": lambda p: p["size"] == 9 and p["givens"] <= 26}
    multiline_answer = True

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, SudokuTruth]:
        size = params["size"]
        solution = "".join(str(d) for row in full_grid(size, r) for d in row)
        shown = set(r.sample(range(size * size), params["givens"]))
        givens = "".join(c if i in shown else BLANK for i, c in enumerate(solution))
        b = 2 if size == 4 else 3
        prompt = (
            f"Sudoku ({size}x{size}, boxes of {b}x{b}). Fill every '.' with a digit from 1 to "
            f"{size} so that each row, each column and each {b}x{b} box contains every digit "
            "exactly once. Keep the given digits. Any valid completion is accepted.\n\n"
            f"{render(givens, size)}\n\n"
            + answer_instruction(*self._form(size), multiline=self.version >= 2)
            + "\n(The example only shows the format.)"
        )
        return prompt, SudokuTruth(size=size, givens=givens, solution=solution)

    @staticmethod
    def _form(size: int) -> tuple[str, str]:
        return (
            f"<row 1>/<row 2>/.../<row {size}>, each row as its {size} digits",
            "/".join(["1234"] * 4) if size == 4 else "/".join(["123456789"] * 9),
        )

    def answer_form(self, truth: SudokuTruth) -> tuple[str, str]:
        return self._form(truth.size)

    def from_row(self, row: Mapping[str, Any]) -> SudokuTruth:
        puzzle = field(row, "puzzle", (str, list))
        if isinstance(puzzle, list):
            if not all(isinstance(r, list) and all(type(c) is int for c in r) for r in puzzle):
                raise ValueError("field 'puzzle' as a list must hold rows of integers (0 = blank)")
            puzzle = "/".join("".join(str(c) for c in r) for r in puzzle)
        # cells as the grid reader counts them: a 4x4 grid's box rules are not cells
        size = 4 if sum(map(len, grid_rows(puzzle))) <= 17 else 9
        rows = parse_layout(puzzle, size)
        if isinstance(rows, str):
            raise ValueError(f"field 'puzzle': {rows}")
        digits = {str(d) for d in range(1, size + 1)}
        givens = "".join(c if c in digits else BLANK for c in "".join(rows))
        if any(c not in digits and c not in BLANKS for c in "".join(rows)):
            raise ValueError(f"field 'puzzle' holds a cell that is neither 1-{size} nor a blank")
        if conflict([givens[i : i + size] for i in range(0, size * size, size)], size, BLANK):
            raise ValueError("field 'puzzle' repeats a digit in a row, column or box")
        return SudokuTruth(size=size, givens=givens)

    def check(self, truth: SudokuTruth, answer: str) -> Outcome:
        size, givens = truth.size, truth.givens
        rows = parse_grid(answer, size) if self.version < 2 else parse_layout(answer, size)
        if isinstance(rows, str):
            return fail("parse_error", error=rows)
        digits = {str(d) for d in range(1, size + 1)}
        for y, row in enumerate(rows):
            for x, c in enumerate(row):
                if c not in digits:
                    reason = "incomplete" if c in BLANKS else "parse_error"
                    return fail(reason, row=y + 1, col=x + 1)
        flat = "".join(rows)
        for i, (g, c) in enumerate(zip(givens, flat, strict=True)):
            if g != BLANK and g != c:
                return fail("givens_changed", row=i // size + 1, col=i % size + 1)
        found = conflict(rows, size)
        if found is not None:
            return fail(found[0], **found[1])
        return ok(filled=givens.count(BLANK))

    def oracle_answer(self, truth: SudokuTruth) -> str:
        size, s = truth.size, truth.solution or ""
        return "/".join(s[i : i + size] for i in range(0, size * size, size))


def _level(size: int, givens: tuple[int, int]) -> ParamSpace:
    return ParamSpace({"size": ChoiceKnob((size,)), "givens": IntKnob(*givens)})


LEVELS = {1: _level(4, (6, 10)), 2: _level(9, (40, 50)), 3: _level(9, (23, 32))}
V1 = SudokuFamily("puzzles.sudoku", 1, LEVELS)
FAMILY = SudokuFamily("puzzles.sudoku", 2, LEVELS, older={1: V1})
"""Version 2: the common grid layouts, a multi-line answer, dataset rows."""
