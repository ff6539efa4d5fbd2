"""Moved to ``gymforge.verify.puzzles.knights_knaves`` (docs/api.md); this path stays importable and
names the same module object."""

import sys

from gymforge.verify.puzzles import knights_knaves

sys.modules[__name__] = knights_knaves
