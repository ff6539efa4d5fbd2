"""Moved to ``gymforge.verify.puzzles.base`` (docs/api.md); this path stays importable and
names the same module object."""

import sys

from gymforge.verify.puzzles import base

sys.modules[__name__] = base
