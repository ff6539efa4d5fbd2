"""The math environment: families, held-out split, QA, datasets and `gymforge grade`."""

from __future__ import annotations

import asyncio
import importlib
import json
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "verify"))
from math_cases import reasoning

from gymforge.core import Reply, SyncEnvironment
from gymforge.core.errors import ConfigError, UnknownTaskError
from gymforge.envs.math.env import MODULES, MathEnv
from gymforge.evaluate.grade import grade_file
from gymforge.qa import QAReport

FAMILIES = [m.FAMILY for m in MODULES]


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_family_is_deterministic_and_its_oracle_verifies(family) -> None:
    env = SyncEnvironment(MathEnv())
    for level in sorted(family.levels):
        for seed in range(3):
            a, b = family.task(level, seed), family.task(level, seed)
            assert a == b and a.task_id == f"{family.name}/v{family.version}/d{level}/s{seed}"
            env.reset(a.task_id, 0)
            r = env.step(Reply(text=f"So the answer is \\boxed{{{a.truth['answer']}}}."))
            assert r.info["success"], (a.task_id, a.truth, r.info["verdict"])
            if "form" in a.truth:  # the oracle writes the demanded form
                assert r.info["verdict"]["facts"]["form_ok"] is True
                assert r.reward_components["form"] == 0.0
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


@pytest.mark.xdist_group("qa-math")
def test_math_env_passes_all_ten_checks(builtin_qa_report: Callable[[str], QAReport]) -> None:
    """The default run's QA report (``QUICK_QA``), shared with tests/qa's all-built-ins test."""
    report = builtin_qa_report("math")
    assert report.passed, {c.name: c.details for c in report.checks if not c.passed}


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_dataset_serves_only_the_instance_it_was_given_to(tmp_path: Path) -> None:
    """``tasks`` is the class's task source and ``use_dataset`` replaces it on one instance:
    neither the class nor a sibling instance (another worker's env) sees the dataset."""
    data = write(tmp_path / "tasks.jsonl", [{"task_id": "q/1", "question": "1+1?", "answer": "2"}])
    served, sibling = MathEnv(), MathEnv()
    served.use_dataset(served.load_dataset(data))
    task_id = served.tasks.dataset_rows("all", None, None, 0)[0]
    assert served.tasks.resolve(task_id).truth["answer"] == "2"
    for other in (sibling.tasks, MathEnv.tasks, MathEnv().tasks):
        assert other is MathEnv.tasks
        with pytest.raises(UnknownTaskError):
            other.resolve(task_id)


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
    long_cot, too_long = reasoning(14_000) + "\\boxed{4}", reasoning(50_000) + "\\boxed{4}"
    answers = write(
        tmp_path / "a.jsonl",
        [{"task_id": f"{pin}/0", "answer": a} for a in ("\\boxed{5}", long_cot, too_long)],
    )
    cli = [sys.executable, "-m", "gymforge.cli", "grade", "math", "--dataset", str(data)]
    ok = subprocess.run(
        [*cli, "--answers", str(answers), "--out", str(tmp_path / "v.jsonl"), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ok.returncode == 0, ok.stderr  # graded everything, whatever the verdicts
    assert json.loads(ok.stdout)["passed"] == 1
    lines = [json.loads(x) for x in (tmp_path / "v.jsonl").read_text().splitlines()]
    assert [ln["passed"] for ln in lines] == [False, True, False]  # a verdict for every line
    assert lines[2]["facts"]["reason"] == "over_budget" and lines[2]["latency_ms"] is not None
    missing = subprocess.run(
        [*cli, "--answers", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "v2.jsonl")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert missing.returncode == 2 and "cannot read answers" in missing.stderr


FORM_FAMILIES = {"math.arith": "reduced_fraction", "math.rationals": "reduced_fraction",
                 "math.modular": "integer"}  # fmt: skip


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_families_that_demand_a_form_declare_it_and_old_ids_replay(family) -> None:
    form = FORM_FAMILIES.get(family.name)
    task = family.task(2, 7)
    assert task.truth.get("form") == form
    if form is None:
        assert family.version == 1 and not family.older
        return
    assert family.version == 2 and set(family.older) == {1}
    old = MathEnv.tasks.resolve(f"{family.name}/v1/d2/s7")  # as version 1 generated it
    assert old == family.older[1].task(2, 7) and "form" not in old.truth
    assert old.task_id.startswith(f"{family.name}/v1/")
    assert family.at_version(1) is family.older[1] and family.at_version(2) is family
    with pytest.raises(UnknownTaskError, match=r"no version 3 \(versions: \[1, 2\]\)"):
        MathEnv.tasks.resolve(f"{family.name}/v3/d2/s7")


def _unreduced(task_id: str) -> tuple[str, str]:
    """(the task's gold, the same value as an unreduced fraction)."""
    task = MathEnv.tasks.resolve(task_id)
    value = Fraction(task.truth["answer"].replace("\\frac{", "").replace("}{", "/").strip("}"))
    return task.truth["answer"], f"\\frac{{{value.numerator * 3}}}{{{value.denominator * 3}}}"


def test_form_is_a_fact_and_a_component_and_success_may_require_it() -> None:
    task_id = next(
        t for t in (f"math.rationals/v2/d1/s{s}" for s in range(50))
        if "frac" in MathEnv.tasks.resolve(t).truth["answer"]
    )  # fmt: skip
    gold, unreduced = _unreduced(task_id)
    lenient, strict = SyncEnvironment(MathEnv()), SyncEnvironment(MathEnv(require_form=True))
    for env, success in ((lenient, True), (strict, False)):
        env.reset(task_id, 0)
        r = env.step(Reply(text=f"\\boxed{{{unreduced}}}"))
        facts = r.info["verdict"]["facts"]
        assert r.info["verdict"]["passed"] and facts["form"] == "reduced_fraction"
        assert facts["form_ok"] is False and "lowest terms" in facts["form_detail"]
        assert r.reward_components["task"] == 1.0 and r.reward_components["form"] == -0.5
        assert r.info["success"] is success
        env.reset(task_id, 0)
        r = env.step(Reply(text=f"\\boxed{{{gold}}}"))
        assert r.info["success"] and r.reward_components["form"] == 0.0
    env.reset("math.counting/v1/d1/s3", 0)  # no form demanded: no form fact, no component
    r = env.step(Reply(text="\\boxed{1}"))
    assert "form_ok" not in r.info["verdict"]["facts"] and "form" not in r.reward_components
    lenient.close()
    strict.close()


def test_last_box_decides_unless_strict() -> None:
    task = MathEnv.tasks.resolve("math.counting/v1/d1/s3")
    gold = task.truth["answer"]
    reply = f"First \\boxed{{{int(gold) + 1}}}, no wait: \\boxed{{{gold}}}"
    for env, success in ((MathEnv(), True), (MathEnv(strict=True), False)):
        sync = SyncEnvironment(env)
        sync.reset(task.task_id, 0)
        r = sync.step(Reply(text=reply))
        assert r.info["success"] is success, r.info["verdict"]
        assert r.info["verdict"]["facts"]["decided_by"] == (
            "strict" if env.strict else "last_answer"
        )
        sync.close()


def test_long_chain_of_thought_is_graded_and_over_budget_gets_a_verdict() -> None:
    env = SyncEnvironment(MathEnv())
    task = MathEnv.tasks.resolve("math.counting/v1/d1/s3")
    gold = task.truth["answer"]
    long_cot = reasoning(32_000) + f"So the answer is \\boxed{{{gold}}}."
    env.reset(task.task_id, 0)
    r = env.step(Reply(text=long_cot))
    assert r.terminated and r.info["success"], r.info
    env.reset(task.task_id, 0)
    r = env.step(Reply(text=reasoning(45_000) + f"\\boxed{{{gold}}}"))
    assert r.truncated and not r.terminated and r.info["end_reason"] == "max_tokens"
    v = r.info["verdict"]
    assert not v["passed"] and v["reason"] == "over_budget" == v["facts"]["reason"]
    assert "budget 40960" in v["facts"]["detail"] and "latency_ms" in r.timing
    assert not r.info["success"] and r.reward_components.get("task") == 0.0
    small = SyncEnvironment(MathEnv(max_tokens=2000))
    small.reset(task.task_id, 0)
    assert small.step(Reply(text=reasoning(3000) + "\\boxed{1}")).info["verdict"]["reason"] == (
        "over_budget"
    )
    env.close()
    small.close()


def test_grade_gives_every_answer_a_verdict_line_whatever_its_length(tmp_path: Path) -> None:
    data = write(
        tmp_path / "tasks.jsonl",
        [
            {"task_id": "q1", "question": "6 x 7?", "answer": "42"},
            {"task_id": "q2", "question": "1/2 + 1/4?", "answer": "\\frac34"},
        ],
    )
    rows = data.read_text().splitlines()
    data.write_text(rows[0] + "\n" + rows[1][:-1] + ', "form": "reduced_fraction"}\n')
    answers = write(
        tmp_path / "answers.jsonl",
        [
            {"task_id": "q1", "answer": reasoning(14_000) + "\\boxed{42}"},
            {"task_id": "q1", "answer": reasoning(60_000) + "\\boxed{42}"},
            {"task_id": "q2", "answer": "\\boxed{\\frac{6}{8}}"},
            {"task_id": "q1", "answer": "\\boxed{40} wait, no: \\boxed{42}"},
        ],
    )

    def factory() -> MathEnv:
        env = MathEnv()
        env.use_dataset(env.load_dataset(data))
        return env

    out = tmp_path / "verdicts.jsonl"
    asyncio.run(grade_file(factory, answers, out, concurrency=2))
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [ln["passed"] for ln in lines] == [True, False, True, True]
    assert all("error" not in ln and ln["latency_ms"] is not None for ln in lines)
    assert lines[1]["facts"]["reason"] == "over_budget"
    assert lines[2]["facts"]["form_ok"] is False and lines[2]["reward_components"]["form"] == -0.5
    assert lines[3]["facts"]["decided_by"] == "last_answer"


def test_dataset_rows_with_a_bad_form_are_refused_with_their_line(tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.jsonl", [{"question": "q", "answer": "1", "form": "decimal"}])
    with pytest.raises(ConfigError, match=r"bad.jsonl:1: form"):
        MathEnv().load_dataset(bad)
