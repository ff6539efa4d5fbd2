"""Moved to ``gymforge.verify.puzzles.countdown`` (docs/api.md); this path stays importable and
names the same module object."""

import sys

from gymforge.verify.puzzles import countdown

sys.modules[__name__] = countdown
