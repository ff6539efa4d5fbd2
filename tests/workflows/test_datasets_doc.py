"""docs/datasets.md's examples load and grade as the page says."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from wf_helpers import cli, write_jsonl

from gymforge.registry.handle import open_env

DOC = Path(__file__).resolve().parents[2] / "docs" / "datasets.md"


def example_rows(section: str) -> list[dict[str, object]]:
    """The JSON example lines of the page's ``## section``."""
    text = DOC.read_text()
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```json\n(.*?)```", body, re.DOTALL)
    return [json.loads(line) for block in blocks for line in block.splitlines() if line.strip()]


@pytest.mark.parametrize(("env", "count"), [("math", 2), ("code", 3)])
def test_the_documented_rows_load(tmp_path: Path, env: str, count: int) -> None:
    rows = example_rows(env)
    assert len(rows) == count
    handle = open_env(env, write_jsonl(tmp_path / f"{env}.jsonl", rows))
    assert len(handle.datasets[0]) == count


def test_the_documented_math_answers_grade(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "p.jsonl", example_rows("math"))
    answers = write_jsonl(
        tmp_path / "a.jsonl",
        [
            {"task_id": "p@x/0", "answer": "... so the total is \\boxed{56}."},
            {"task_id": "gsm-0042", "answer": "\\boxed{4}"},
            {"task_id": "gsm-0042", "answer": "Answer: 4"},
        ],
    )
    pin = open_env("math", data).datasets[0].pin
    lines = answers.read_text().replace("p@x", pin)
    answers.write_text(lines)
    res = cli("grade", "math", "--dataset", data, "--answers", answers, "--out", tmp_path / "v")
    assert res.code == 0, res.stderr
    verdicts = [json.loads(x) for x in (tmp_path / "v").read_text().splitlines()]
    assert [v["passed"] for v in verdicts] == [True, True, False]  # no box, no answer
