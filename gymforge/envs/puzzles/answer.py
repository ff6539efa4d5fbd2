"""Moved to ``gymforge.verify.puzzles.answer`` (docs/api.md); this path stays importable and
names the same module object."""

import sys

from gymforge.verify.puzzles import answer

sys.modules[__name__] = answer
