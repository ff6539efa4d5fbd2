"""Moved to ``gymforge.verify.puzzles.kk_logic`` (docs/api.md); this path stays importable and
names the same module object."""

import sys

from gymforge.verify.puzzles import kk_logic

sys.modules[__name__] = kk_logic
