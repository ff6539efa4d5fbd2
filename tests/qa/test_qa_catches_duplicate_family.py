"""Two task families under one name are refused when the task source is built.

An author who copies a family and forgets to rename it (two ``"stock.count"`` families)
got a source that silently kept the last one: its ids collide with the first's, which never
generated a task, and every QA check passed (the declared shares were read from the
deduplicated source). ``TaskSource.of`` now refuses the name twice.
"""

from __future__ import annotations

import pytest
from planted_rl_bugs import HELD_OUT, LEVELS, FlatLevelsFamily, StockFamily

from gymforge.tasks import TaskSource


def test_two_families_under_one_name_are_refused() -> None:
    with pytest.raises(ValueError, match=r"two task families are named 'stock.count'"):
        TaskSource.of(
            [StockFamily("stock.count", 1, LEVELS), FlatLevelsFamily("stock.count", 1, LEVELS)],
            HELD_OUT,
        )


def test_distinct_names_are_kept() -> None:
    source = TaskSource.of(
        [StockFamily("stock.count", 1, LEVELS), StockFamily("stock.other", 1, LEVELS)], HELD_OUT
    )
    assert sorted(source.families) == ["stock.count", "stock.other"]
