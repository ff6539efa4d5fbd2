"""Moved to ``gymforge.verify.puzzles.rows`` (docs/api.md); this path stays importable and
names the same module object."""

import sys

from gymforge.verify.puzzles import rows

sys.modules[__name__] = rows
