"""A line nested deeper than Python's JSON reader recurses (a few thousand brackets, well
within any line limit) is damaged text to every reader of a file a run or an agent wrote,
as ``trajectory.schema.load_line`` makes it for the trajectory reader: ``grade``'s answers
file names the line (ConfigError), the live view's follower reports it as a skipped line
and the report's episode browser stops at it as at a torn tail, instead of a
RecursionError traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from gymforge.core.errors import ConfigError
from gymforge.evaluate.browser import read_selected
from gymforge.evaluate.follow import RunFollower
from gymforge.evaluate.grade import parse_answer

NESTED = b"[" * 100_000 + b"]" * 100_000


def test_an_answer_line_nested_too_deeply_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not valid JSON"):
        parse_answer(b'{"task_id": "t", "answer": ' + NESTED + b"}")


def test_the_follower_skips_a_line_nested_too_deeply(tmp_path: Path) -> None:
    (tmp_path / "trajectories.jsonl").write_bytes(NESTED + b"\n")
    follower = RunFollower(tmp_path)
    follower.poll()
    assert len(follower.state.problems) == 1
    assert follower.state.problems[0].startswith("line 1: skipped")


def test_the_browser_stops_at_a_line_nested_too_deeply(tmp_path: Path) -> None:
    (tmp_path / "trajectories.jsonl").write_bytes(NESTED + b"\n")
    assert read_selected(tmp_path / "trajectories.jsonl", ["e"]) == {}
