"""Math datasets in the shapes their authors publish (GSM8K, MATH, MATH-500), read as they
are: the gold is the final answer, the worked solution is kept as a reference, a gold that
is not an answer is a ``file:line`` error, and ``grade`` reads other answer conventions only
when told. The rows are written here in each published shape; the files stay out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gymforge.core.errors import ConfigError
from gymforge.envs.math.conventions import as_boxed_reply
from gymforge.envs.math.env import MathEnv
from gymforge.envs.math.shapes import gsm8k_gold

# openai/grade-school-math test.jsonl, first row as published, and one with a comma
GSM8K = [
    {
        "question": "Janet\u2019s ducks lay 16 eggs per day. She eats three for breakfast every "
        "morning and bakes muffins for her friends every day with four. She sells the "
        "remainder at the farmers' market daily for $2 per fresh duck egg. How much in "
        "dollars does she make every day at the farmers' market?",
        "answer": "Janet sells 16 - 3 - 4 = <<16-3-4=9>>9 duck eggs a day.\nShe makes 9 * 2 = "
        "$<<9*2=18>>18 every day at the farmer\u2019s market.\n#### 18",
    },
    {
        "question": "A shop sells 40 boxes of 40 pens. How many pens is that?",
        "answer": "40 * 40 = <<40*40=1600>>1600 pens.\n#### 1,600",
    },
]
# hendrycks/MATH (no answer field) and MATH-500 (answer field) rows
MATH = [
    {
        "problem": "What is the value of $\\sqrt{36 \\times \\sqrt{16}}$?",
        "level": "Level 1",
        "type": "Prealgebra",
        "solution": "We have $\\sqrt{36\\times 4} = \\sqrt{144} = \\boxed{12}$.",
    },
    {
        "problem": "Simplify $\\frac{6}{8}$.",
        "solution": "Divide by 2: $\\frac{6}{8} = \\boxed{\\frac{3}{4}}$.",
        "answer": "\\frac34",
        "subject": "Prealgebra",
        "level": 1,
        "unique_id": "test/prealgebra/1.json",
    },
]


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def grade(tmp: Path, data: Path, answers: list[str], *flags: str) -> subprocess.CompletedProcess:
    ds = MathEnv().load_dataset(data)
    ids = [t.task_id for t in ds.tasks]
    lines = [{"task_id": ids[i % len(ids)], "answer": a} for i, a in enumerate(answers)]
    a = write(tmp / "answers.jsonl", lines)
    cli = [sys.executable, "-m", "gymforge.cli", "grade", "math", "--dataset", str(data)]
    out = tmp / "v.jsonl"
    return subprocess.run(
        [*cli, "--answers", str(a), "--out", str(out), "--json", *flags],
        capture_output=True,
        text=True,
        timeout=180,
    )


def verdicts(tmp: Path) -> list[bool]:
    return [json.loads(x)["passed"] for x in (tmp / "v.jsonl").read_text().splitlines()]


def test_gsm8k_gold_is_the_number_after_the_hashes_and_the_rationale_is_kept(
    tmp_path: Path,
) -> None:
    ds = MathEnv().load_dataset(write(tmp_path / "test.jsonl", GSM8K))
    assert [t.truth["answer"] for t in ds.tasks] == ["18", "1600"]
    assert ds.tasks[0].truth["reference_solution"] == GSM8K[0]["answer"]
    assert ds.tasks[0].prompt == GSM8K[0]["question"]  # the rationale is never shown
    assert ds.manifest()["shape"] == "gsm8k"


def test_gsm8k_file_is_graded_right_and_says_how_it_was_read(tmp_path: Path) -> None:
    data = write(tmp_path / "test.jsonl", GSM8K)
    done = grade(tmp_path, data, ["\\boxed{18}", "\\boxed{1,600}", "\\boxed{17}", "#### 1600"])
    assert done.returncode == 0, done.stderr
    assert verdicts(tmp_path) == [True, True, False, False]  # boxed only, by default
    assert done.stderr.count("read as GSM8K: gold after ####") == 1
    assert json.loads(done.stdout)["datasets"][0]["shape"] == "gsm8k"


def test_an_unparseable_gsm8k_gold_is_one_error_line(tmp_path: Path) -> None:
    bad = [*GSM8K, {"question": "q?", "answer": "Some work.\n#### eighteen"}]
    data = write(tmp_path / "test.jsonl", bad)
    with pytest.raises(ConfigError, match=r"test\.jsonl:3: answer: '#### eighteen' is not a"):
        MathEnv().load_dataset(data)
    cli = [sys.executable, "-m", "gymforge.cli", "grade", "math", "--dataset", str(data)]
    done = subprocess.run(
        [*cli, "--answers", str(data), "--out", str(tmp_path / "v.jsonl")],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 2
    problems = [ln for ln in done.stderr.splitlines() if "test.jsonl:3" in ln]
    assert len(problems) == 1 and "eighteen" in problems[0]


def test_a_gsm8k_row_without_hashes_in_a_gsm8k_file_is_refused(tmp_path: Path) -> None:
    data = write(tmp_path / "t.jsonl", [*GSM8K, {"question": "q?", "answer": "18"}])
    with pytest.raises(ConfigError, match=r"t\.jsonl:3: answer: no final '#### N' line"):
        MathEnv().load_dataset(data)


def test_a_rationale_in_a_plain_file_is_refused_not_made_unpassable(tmp_path: Path) -> None:
    rows = [{"question": "2+2?", "answer": "4"}, GSM8K[0]]
    with pytest.raises(ConfigError, match=r"t\.jsonl:2: answer: holds a '#### N' line"):
        MathEnv().load_dataset(write(tmp_path / "t.jsonl", rows))
    plain = MathEnv().load_dataset(write(tmp_path / "p.jsonl", rows[:1]))
    assert plain.manifest()["shape"] == "plain" and "reference_solution" not in plain.tasks[0].truth


def test_math_rows_take_answer_else_the_last_box(tmp_path: Path) -> None:
    data = write(tmp_path / "math.jsonl", MATH)
    ds = MathEnv().load_dataset(data)
    assert [t.truth["answer"] for t in ds.tasks] == ["12", "\\frac34"]
    assert ds.tasks[0].truth["reference_solution"] == MATH[0]["solution"]
    assert ds.manifest()["shape"] == "math"
    done = grade(tmp_path, data, ["\\boxed{12}", "\\boxed{0.75}", "\\boxed{13}", "\\boxed{3/5}"])
    assert done.returncode == 0, done.stderr
    assert verdicts(tmp_path) == [True, True, False, False]
    assert "read as MATH" in done.stderr


def test_a_math_row_with_no_final_answer_is_refused(tmp_path: Path) -> None:
    rows = [MATH[0], {"problem": "p", "solution": "It is twelve."}]
    with pytest.raises(ConfigError, match=r"m\.jsonl:2: solution: no final \\boxed\{\} answer"):
        MathEnv().load_dataset(write(tmp_path / "m.jsonl", rows))


def test_grade_reads_other_answer_conventions_only_when_told(tmp_path: Path) -> None:
    data = write(tmp_path / "test.jsonl", GSM8K)
    outputs = [
        "She sells 9 eggs at $2.\n#### 18",
        "40 boxes of 40 is 1,600.\n#### 1,600",
        "So she makes 9 * 2 = 18 dollars. The answer is 18.",
        "The answer is 1,600",
        "<think>#### 18</think>\n#### 17",  # reasoning is never read
        "#### 1600\nWait. The answer is \\boxed{1500}.",  # the last answer decides
    ]
    done = grade(tmp_path, data, outputs, "--answer-convention", "hashes")
    assert done.returncode == 0, done.stderr
    assert verdicts(tmp_path) == [True, True, False, False, False, True]
    done = grade(tmp_path, data, outputs, "--answer-convention", "answer-is")
    assert verdicts(tmp_path) == [False, False, True, True, False, False]
    done = grade(tmp_path, data, outputs, "--answer-convention", "any")
    assert verdicts(tmp_path) == [True, True, True, True, False, False]
    bad = grade(tmp_path, data, outputs, "--answer-convention", "last-number")
    assert bad.returncode == 2 and "must be one of" in bad.stderr


def test_training_prompts_keep_asking_for_a_box() -> None:
    env = MathEnv()
    assert "\\boxed{}" in env.system_prompt and env.answer_convention == "boxed"
    assert as_boxed_reply("#### 5", "boxed") == "#### 5"
    with pytest.raises(ValueError, match="answer_convention"):
        MathEnv(answer_convention="last-number")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("rationale", "gold"),
    [
        ("x\n#### 18", "18"),
        ("#### -3", "-3"),
        ("#### 1,234,567", "1234567"),
        ("#### $5.", "5"),
        ("#### 0.25", "0.25"),
        ("a\n#### 1\nb\n#### 2", "2"),
    ],
)
def test_gsm8k_gold_reading(rationale: str, gold: str) -> None:
    assert gsm8k_gold(rationale) == gold
