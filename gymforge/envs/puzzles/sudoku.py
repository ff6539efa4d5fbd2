"""Moved to ``gymforge.verify.puzzles.sudoku`` (docs/api.md); this path stays importable and
names the same module object."""

import sys

from gymforge.verify.puzzles import sudoku

sys.modules[__name__] = sudoku
