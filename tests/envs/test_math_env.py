"""The math environment: families, held-out split, QA, datasets and `gymforge grade`."""

from __future__ import annotations

import asyncio
import importlib
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from gymforge.core import Reply, SyncEnvironment
from gymforge.envs.math.env import MODULES, MathEnv
from gymforge.evaluate.grade import grade_file
from gymforge.qa import QATarget, run_qa

FAMILIES = [m.FAMILY for m in MODULES]


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_family_is_deterministic_and_its_oracle_verifies(family) -> None:
    env = SyncEnvironment(MathEnv())
    for level in sorted(family.levels):
        for seed in range(3):
            a, b = family.task(level, seed), family.task(level, seed)
            assert a == b and a.task_id == f"{family.name}/v1/d{level}/s{seed}"
            env.reset(a.task_id, 0)
            r = env.step(Reply(text=f"So the answer is \\boxed{{{a.truth['answer']}}}."))
            assert r.info["success"], (a.task_id, a.truth, r.info["verdict"])
    env.close()


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_duplicate_rate_is_bounded(family) -> None:
    for level in sorted(family.levels):
        prompts = Counter(family.task(level, s).prompt for s in range(300))
        assert 1 - len(prompts) / 300 <= 0.2, (family.name, level)


def test_wrong_and_hedged_answers_fail() -> None:
    env = SyncEnvironment(MathEnv())
    task = MathEnv.tasks.resolve("math.linear/v1/d1/s4")
    gold = task.truth["answer"]
    for reply in (
        f"\\boxed{{{gold}}} or \\boxed{{{gold}+1}}",
        "no idea",
        "\\boxed{123456789}",
        f"<think>\\boxed{{{gold}}}</think> \\boxed{{0.5}}",
    ):
        env.reset(task.task_id, 0)
        r = env.step(Reply(text=reply))
        assert r.terminated and not r.info["success"], reply
        assert "latency_ms" not in r.info["verdict"]["facts"]  # wall clock stays out of info
        assert "latency_ms" in r.timing
    env.close()


def test_heldout_regions_are_never_trained_on() -> None:
    for task_id in MathEnv.tasks.sample(300, 5, "train"):
        assert MathEnv.tasks.resolve(task_id).split == "train"
    held = MathEnv.tasks.sample(30, 5, "heldout")
    assert {
        importlib.import_module(f"gymforge.envs.math.{t.split('.')[1].split('/')[0]}") for t in held
    }
    assert all(MathEnv.tasks.resolve(t).split == "heldout" for t in held)


def test_math_env_passes_all_ten_checks() -> None:
    report = run_qa(QATarget.from_factory(MathEnv, ref="math", builtin=True))
    assert report.passed, {c.name: c.details for c in report.checks if not c.passed}


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_grade_judges_every_line_in_order(tmp_path: Path) -> None:
    data = write(
        tmp_path / "tasks.jsonl",
        [
            {"task_id": "gsm/1#a", "question": "1/2 + 1/4?", "answer": "\\frac{3}{4}"},
            {"task_id": "gsm/2#b", "question": "Roots of x^2-1?", "answer": "\\{-1, 1\\}"},
        ],
    )
    answers = write(
        tmp_path / "answers.jsonl",
        [
            {"task_id": "gsm/1#a", "answer": "\\boxed{0.75}"},
            {"task_id": "gsm/2#b", "answer": "\\boxed{\\{1,-1\\}}"},
            {"task_id": "gsm/1#a", "answer": "\\boxed{0.75}"},  # judged again, not cached
            {"task_id": "gsm/1#a", "answer": "\\boxed{3/5}"},
            {"task_id": "missing", "answer": "\\boxed{1}"},
            {"task_id": "gsm/1#a"},
        ],
    )
    (tmp_path / "answers.jsonl").write_text(answers.read_text() + "not json\n\n")

    def factory() -> MathEnv:
        env = MathEnv()
        env.use_dataset(env.load_dataset(data))
        return env

    out = tmp_path / "verdicts.jsonl"
    summary = asyncio.run(grade_file(factory, answers, out, concurrency=3))
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [ln["line"] for ln in lines] == [1, 2, 3, 4, 5, 6, 7]
    assert [ln["passed"] for ln in lines] == [True, True, True, False, False, False, False]
    assert all(ln["latency_ms"] is not None for ln in lines[:4])
    assert lines[3]["facts"]["reason"] == "not_equal" and lines[3]["reward_components"]["task"] == 0
    assert "error" in lines[4] and "error" in lines[5] and "not valid JSON" in lines[6]["error"]
    assert summary.lines == 7 and summary.errors == 3


def test_grade_cli_exit_codes(tmp_path: Path) -> None:
    data = write(tmp_path / "t.jsonl", [{"question": "2+2?", "answer": "4"}])
    pin = json.loads(
        subprocess.run(
            [
                sys.executable,
                "-c",
                "from gymforge.tasks import load_jsonl;"
                f"print(__import__('json').dumps(load_jsonl('{data}').pin))",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    answers = write(tmp_path / "a.jsonl", [{"task_id": f"{pin}/0", "answer": "\\boxed{5}"}])
    cli = [sys.executable, "-m", "gymforge.cli", "grade", "math", "--dataset", str(data)]
    ok = subprocess.run(
        [*cli, "--answers", str(answers), "--out", str(tmp_path / "v.jsonl"), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ok.returncode == 0, ok.stderr  # graded everything, whatever the verdicts
    assert json.loads(ok.stdout)["passed"] == 0
    missing = subprocess.run(
        [*cli, "--answers", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "v2.jsonl")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert missing.returncode == 2 and "cannot read answers" in missing.stderr
