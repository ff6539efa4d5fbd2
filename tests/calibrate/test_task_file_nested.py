"""A task file line nested past ``json.loads``' recursion is the same clear error as any
JSON line without a string ``task_id`` (it raised RecursionError with a traceback)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gymforge.calibrate.pipeline import load_task_file
from gymforge.core.errors import ConfigError


def test_a_line_nested_too_deeply_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "tasks.txt"
    path.write_text("math.arith/v2/d1/s5\n" + '{"a":' * 100_000 + "1" + "}" * 100_000 + "\n")
    with pytest.raises(ConfigError, match=r":2: a JSON line needs a string 'task_id'"):
        load_task_file(path)
