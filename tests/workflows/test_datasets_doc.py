"""docs/datasets.md's examples load and grade as the page says."""

from __future__ import annotations

import json
import re
from pathlib import Path

from wf_helpers import cli, write_jsonl

from gymforge.registry.handle import open_env

DOC = Path(__file__).resolve().parents[2] / "docs" / "datasets.md"


def example_blocks(section: str) -> list[list[dict[str, object]]]:
    """The JSON example blocks of the page's ``## section``, each a list of rows."""
    text = DOC.read_text()
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```json\n(.*?)```", body, re.DOTALL)
    return [[json.loads(line) for line in block.splitlines() if line.strip()] for block in blocks]


def example_rows(section: str) -> list[dict[str, object]]:
    return [row for block in example_blocks(section) for row in block]


def test_the_documented_math_shapes_load_one_file_each(tmp_path: Path) -> None:
    """Plain rows, a GSM8K row and a MATH row: a math file holds one shape."""
    blocks = example_blocks("math")
    assert [len(b) for b in blocks] == [2, 1, 1]
    golds = []
    for i, block in enumerate(blocks):
        handle = open_env("math", write_jsonl(tmp_path / f"math{i}.jsonl", block))
        assert len(handle.datasets[0]) == len(block)
        golds.append(next(iter(handle.datasets[0])).truth["answer"])
    assert golds == ["56", "18", "12"]


def test_the_documented_code_rows_load_in_one_file(tmp_path: Path) -> None:
    """Code rows of every format mix freely in one file."""
    rows = example_rows("code")
    assert len(rows) == 4
    handle = open_env("code", write_jsonl(tmp_path / "code.jsonl", rows))
    assert len(handle.datasets[0]) == 4


def test_the_documented_math_answers_grade(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "p.jsonl", example_blocks("math")[0])
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
