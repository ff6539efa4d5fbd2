"""Puzzle datasets: outside tasks per family, pinned by hash, bad rows reported one by one."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import reasoning_gym

from gymforge.core import Reply, SyncEnvironment
from gymforge.envs.puzzles import PuzzlesEnv
from gymforge.envs.puzzles.dataset import load_puzzles
from gymforge.envs.reasoning_gym.family import jsonable

ROOT = Path(__file__).resolve().parents[2]

GOOD: list[dict[str, Any]] = [
    {
        "family": "countdown",
        "question": "Make 24 from 4, 7, 8, 8 using every number once.",
        "answer": "(7 - 8 / 8) * 4",
        "numbers": [4, 7, 8, 8],
        "target": 24,
        "use_all": True,
    },
    {
        "family": "puzzles.countdown",
        "question": "Reach 3 with 5 and 8.",
        "answer": "-5 + 8",
        "numbers": [5, 8],
        "target": 3,
        "negatives": True,
    },
    {
        "family": "sudoku",
        "question": "Solve this sudoku.",
        "answer": "1 2 3 4\n3 4 1 2\n2 1 4 3\n4 3 2 1",
        "puzzle": [[1, 0, 0, 4], [0, 4, 1, 0], [2, 0, 0, 3], [0, 3, 2, 0]],
    },
    {
        "family": "knights_knaves",
        "question": "Amelia: 'Elizabeth is a hero.' Elizabeth: 'If Amelia is a hero, so am I.'",
        "answer": "Amelia is a hero, and Elizabeth is a hero.",
        "names": ["Amelia", "Elizabeth"],
        "statements": [["not", ["lying", 1]], ["->", ["telling-truth", 0], ["telling-truth", 1]]],
        "labels": {"knight": "hero", "knave": "villain"},
    },
    {
        "family": "coloring",
        "question": "Two-colour the path 1-2-3.",
        "answer": "1=1, 2=2, 3=1",
        "nodes": [1, 2, 3],
        "edges": [[1, 2], [2, 3]],
        "colors": 2,
    },
    {
        "task_id": "my-path/1",
        "family": "shortest_path",
        "question": "Shortest path from 1 to 3.",
        "answer": "1 -> 2 -> 3",
        "nodes": [1, 2, 3],
        "edges": [[1, 2, 1], [2, 3, 1], [1, 3, 5]],
        "source": 1,
        "target": 3,
    },
]
BAD_LINES = [
    (json.dumps({"family": "countdown", "question": "q", "answer": "1 + 2", "numbers": [1, 2]}),
     "missing field 'target'"),
    (json.dumps({"family": "chess", "question": "q", "answer": "e4"}),
     "unknown puzzle family 'chess'"),
    ("{not json", "not valid JSON"),
    (json.dumps({"family": "sudoku", "question": "q", "puzzle": "1..4"}), "answer: Field required"),
    (json.dumps({"family": "countdown", "question": "q", "answer": "1 + 1", "numbers": [1, 2],
                 "target": 3}), "answer fails the puzzles.countdown checker: uses_number_twice"),
    (json.dumps({"family": "coloring", "question": "q", "answer": "1=1", "nodes": [1],
                 "edges": [[1, 9]], "colors": 2}), "must join two different known nodes"),
    # "knave" as the word for knight: an answer in the usual words would be read backwards
    (json.dumps({"family": "knights_knaves", "question": "q", "answer": "Ann=knave",
                 "names": ["Ann"], "statements": [["is", 0, "knight"]],
                 "labels": {"knight": "knave", "knave": "villain"}}), "field 'labels'"),
    # 1 - 3 twice: the distance takes the lighter edge, a checker one weight per pair, so the
    # right answer "1 -> 3" would fail where the row's own (1 -> 2 -> 3) passes
    (json.dumps({"family": "shortest_path", "question": "q", "answer": "1 -> 2 -> 3",
                 "nodes": [1, 2, 3], "edges": [[1, 2, 1], [2, 3, 1], [1, 3, 2], [3, 1, 5]],
                 "source": 1, "target": 3}), "listed with weights 2 and 5"),
]  # fmt: skip


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_every_family_loads_and_its_reference_answer_is_the_oracle(tmp_path: Path) -> None:
    ds = load_puzzles(write(tmp_path / "good.jsonl", [json.dumps(r) for r in GOOD]))
    assert len(ds) == len(GOOD) and not ds.errors
    assert ds.resolve("my-path/1") is ds.tasks[5]
    env = SyncEnvironment(PuzzlesEnv())
    env.env.use_dataset(ds)
    for task in ds:
        assert task.prompt.startswith(GOOD[task.params["row"]]["question"])
        assert "Answer:" in task.prompt
        env.reset(task.task_id, 0)
        action = asyncio.run(env.env.oracle_action())
        assert env.step(action).info["success"], task.task_id


def test_the_pin_is_the_content_hash(tmp_path: Path) -> None:
    a = load_puzzles(write(tmp_path / "a.jsonl", [json.dumps(GOOD[0])]), name="set")
    b = load_puzzles(write(tmp_path / "b.jsonl", [json.dumps(GOOD[0])]), name="set")
    c = load_puzzles(write(tmp_path / "c.jsonl", [json.dumps(GOOD[1])]), name="set")
    assert a.pin == b.pin != c.pin
    assert a.manifest()["sha256"] == a.content_hash


def test_bad_rows_are_one_line_each_naming_file_and_line_and_lose_nothing(tmp_path: Path) -> None:
    lines = [json.dumps(GOOD[0])]
    for bad, _ in BAD_LINES:
        lines += [bad, json.dumps(GOOD[1])]
    ds = load_puzzles(write(tmp_path / "mixed.jsonl", lines))
    assert len(ds) == 1 + len(BAD_LINES)
    assert len(ds.errors) == len(BAD_LINES)
    for k, ((_, expected), problem) in enumerate(zip(BAD_LINES, ds.errors, strict=True)):
        assert problem.startswith(f"mixed.jsonl:{2 + 2 * k}: "), problem
        assert expected in problem, problem
        assert "\n" not in problem
    # a refused row keeps its place: the rows after it keep their ids
    assert [t.params["row"] for t in ds] == [0, *range(2, 2 * len(BAD_LINES) + 1, 2)]


def test_grade_puzzles_dataset_grades_every_good_row(tmp_path: Path) -> None:
    lines = [json.dumps(GOOD[0]), BAD_LINES[0][0], json.dumps(GOOD[2]), BAD_LINES[1][0]]
    rows = write(tmp_path / "rows.jsonl", lines)
    pin = load_puzzles(rows).pin
    answers = [
        {"task_id": f"{pin}/0", "answer": "Answer: 4 * (7 - 8/8)"},
        {"task_id": f"{pin}/1", "answer": "Answer: 1 + 2"},
        {"task_id": f"{pin}/2", "answer": "Answer:\n1234\n3412\n2143\n4321"},
        {"task_id": f"{pin}/2", "answer": "Answer: 1234/3412/2143/4312"},
    ]
    write(tmp_path / "answers.jsonl", [json.dumps(a) for a in answers])
    out = subprocess.run(
        [sys.executable, "-m", "gymforge.cli", "grade", "puzzles", "--dataset", str(rows),
         "--answers", str(tmp_path / "answers.jsonl"), "--out", str(tmp_path / "v.jsonl")],
        capture_output=True, text=True, cwd=ROOT, timeout=300, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    skipped = [ln for ln in out.stderr.splitlines() if ln.startswith("dataset: ")]
    assert skipped == [
        "dataset: rows.jsonl:2: missing field 'target'",
        "dataset: rows.jsonl:4: unknown puzzle family 'chess'; known: coloring, "
        "countdown, knights_knaves, shortest_path, sudoku",
    ]
    verdicts = [json.loads(ln) for ln in (tmp_path / "v.jsonl").read_text().splitlines()]
    assert [v["passed"] for v in verdicts] == [True, False, True, False]
    assert "did not load: rows.jsonl:2: missing field 'target'" in verdicts[1]["error"]
    assert verdicts[3]["facts"]["reason"] == "givens_changed"


@pytest.mark.parametrize("name", ["countdown", "sudoku", "knights_knaves"])
def test_hand_converted_reasoning_gym_items_are_graded_as_reasoning_gym_grades_them(
    tmp_path: Path, name: str
) -> None:
    """reasoning-gym items written as puzzle rows: their own answers pass gymforge's checkers
    (unary minus in countdown, sudoku grids on lines, nested knights-and-knaves terms)."""
    ds_rg = reasoning_gym.create_dataset(name, seed=42, size=30)
    lines = []
    for item in ds_rg:
        meta = jsonable(item["metadata"])
        row: dict[str, Any] = {"family": name, "question": item["question"]}
        if name == "countdown":
            row |= {"numbers": meta["numbers"], "target": meta["target"], "negatives": True,
                    "use_all": True, "answer": item["answer"]}  # fmt: skip
        elif name == "sudoku":
            row |= {"puzzle": meta["puzzle"], "answer": item["answer"]}
        else:
            words = meta["knight_knave_terms"]
            labels = [words["knight"], words["knave"]]
            row |= {"names": meta["names"], "statements": meta["statements"],
                    "labels": labels, "answer": item["answer"]}  # fmt: skip
        lines.append(json.dumps(row))
    ds = load_puzzles(write(tmp_path / f"{name}.jsonl", lines))
    assert not ds.errors, ds.errors[:3]
    assert len(ds) == 30
    env = SyncEnvironment(PuzzlesEnv())
    env.env.use_dataset(ds)
    for task, item in zip(ds, ds_rg, strict=True):
        replies = [item["answer"]]
        if name == "countdown":  # the same solution with unary minus, as models write it
            replies.append(f"-(-({item['answer']}))")
        for reply in replies:
            env.reset(task.task_id, 0)
            good = env.step(Reply(text=f"Answer: {reply}"))
            assert good.info["success"], (task.task_id, good.info)


def test_a_gzipped_puzzle_dataset_pins_the_same(tmp_path: Path) -> None:
    import gzip

    lines = [json.dumps(r) for r in GOOD]
    plain = load_puzzles(write(tmp_path / "set.jsonl", lines))
    packed = tmp_path / "set.jsonl.gz"
    packed.write_bytes(gzip.compress("".join(line + "\n" for line in lines).encode()))
    zipped = load_puzzles(packed)
    assert zipped.pin == plain.pin and len(zipped) == len(plain)


def test_a_4x4_sudoku_row_with_box_rules_loads(tmp_path: Path) -> None:
    """A 4x4 puzzle in the layout the generator prints (``|`` and ``-+-`` box rules) is a
    4x4 puzzle: its rule characters are not cells that made it look like a 9x9 and refused
    a readable row."""
    puzzle = "1 . | . 4\n. 4 | 1 .\n----+----\n2 . | . 3\n. 3 | 2 ."
    row = {"family": "sudoku", "question": "Solve.", "puzzle": puzzle,
           "answer": "1234/3412/2143/4321"}  # fmt: skip
    ds = load_puzzles(write(tmp_path / "rules.jsonl", [json.dumps(row)]))
    assert not ds.errors, ds.errors
    assert ds.tasks[0].truth["size"] == 4
