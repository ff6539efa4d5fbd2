"""The reasoning-gym adapter: ``reasoning-gym:NAME`` on reasoning-gym's real datasets."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import reasoning_gym

from gymforge.core import SyncEnvironment
from gymforge.core.errors import UnknownTaskError, UserError
from gymforge.core.types import Reply
from gymforge.envs.reasoning_gym import env_class, inside
from gymforge.envs.reasoning_gym.env import DEFAULT_TOKENS
from gymforge.envs.reasoning_gym.family import ReasoningGymFamily
from gymforge.envs.reasoning_gym.redteam import FRAME_DEPTH, _frame_injection
from gymforge.envs.reasoning_gym.scoring import answer_chars, score
from gymforge.qa import QATarget, run_qa
from gymforge.qa.checks.common import QAOptions
from gymforge.registry.resolve import make_env, resolve_factory

ROOT = Path(__file__).resolve().parents[2]
DATASETS = ("countdown", "sudoku", "knights_knaves")


def cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gymforge.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        check=False,
    )


def native_score(dataset: str, answer: str, entry: dict[str, Any]) -> float:
    """reasoning-gym's own score_answer in a fresh process (no gymforge guard installed)."""
    code = (
        "import json, sys, reasoning_gym\n"
        "answer, entry = json.loads(sys.stdin.read())\n"
        f"print(reasoning_gym.create_dataset({dataset!r}).score_answer(answer, entry))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps([answer, entry]),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return float(out.stdout.strip())


@pytest.fixture(autouse=True)
def _scorer_uids(monkeypatch: pytest.MonkeyPatch) -> None:
    """This test process's scorer sandbox on uids no other test run uses."""
    base = 100_000 + (os.getpid() % 5000) * 100 + 30 - 64
    monkeypatch.setenv("GYMFORGE_SANDBOX_UID_BASE", str(base))


@pytest.fixture(scope="module")
def kk() -> ReasoningGymFamily:
    return env_class("knights_knaves").family


def test_ids_resolve_through_the_registry_and_name_the_extra_when_missing(monkeypatch) -> None:
    env = make_env("reasoning-gym:knights_knaves")
    assert env.spec.id == "reasoning-gym:knights_knaves"
    with pytest.raises(UserError, match=r"no dataset 'countdwn'.*did you mean countdown"):
        resolve_factory("reasoning-gym:countdwn")
    # the extra missing: importing reasoning_gym fails, and the adapter is not loaded yet
    for name in [m for m in sys.modules if m.split(".")[0] == "reasoning_gym"]:
        monkeypatch.setitem(sys.modules, name, None)
    for name in [m for m in sys.modules if m.startswith("gymforge.envs.reasoning_gym")]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(UserError, match=r"optional extra 'interop'"):
        resolve_factory("reasoning-gym:countdown")


def test_core_registry_does_not_import_reasoning_gym() -> None:
    code = (
        "import sys, gymforge.registry.resolve as r; r.make_env('puzzles');"
        "print('reasoning_gym' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert out.stdout.strip() == "False"


def test_levels_come_from_the_curriculum_and_the_top_one_is_held_out() -> None:
    fam = env_class("countdown").family
    assert len(fam.levels) >= 3
    assert fam.configs[0]["max_numbers"] < fam.configs[-1]["max_numbers"]
    tasks = env_class("countdown").tasks
    top = max(fam.levels)
    assert tasks.split.is_heldout(fam.name, {"level": top})
    assert not tasks.split.is_heldout(fam.name, {"level": 1})
    for task_id in tasks.sample(30, 3, "train"):
        assert f"/d{top}/" not in task_id


def test_same_id_same_item_and_nearby_seeds_share_nothing(kk: ReasoningGymFamily) -> None:
    a = kk.task(2, 1000)
    assert kk.resolve(a.task_id) == a
    assert a.task_id == f"reasoning_gym.knights_knaves/v{kk.version}/d2/s1000"
    low = {kk.task(2, s).prompt for s in range(1000, 1040)}
    high = {kk.task(2, s).prompt for s in range(1020, 1060)}
    # seed + i seeding would make the 20 shared seeds' neighbours share items too
    assert len(low & high) <= 21
    assert json.dumps(a.truth)  # plain JSON (reasoning-gym metadata holds tuples, numpy str)
    with pytest.raises(UnknownTaskError, match="v1"):
        kk.resolve("reasoning_gym.knights_knaves/v1/d2/s5")


@pytest.mark.parametrize("name", DATASETS)
def test_oracle_passes_and_a_wrong_answer_fails(name: str) -> None:
    env = SyncEnvironment(env_class(name)())
    fam = env_class(name).family
    for seed in range(4):
        task = fam.task(1, seed)
        env.reset(task.task_id, 0)
        good = env.step(Reply(text=f"<think>hm</think><answer>{task.truth['answer']}</answer>"))
        assert good.info["verdict"]["passed"], good.info
        env.reset(task.task_id, 0)
        bad = env.step(Reply(text="<answer>no idea</answer>"))
        assert not bad.info["verdict"]["passed"]
        assert bad.info["verdict"]["facts"]["reason"] in ("wrong_answer", "parse_error")


def rg_score(fam: ReasoningGymFamily, level: int, entry: dict[str, Any], reply: str) -> Any:
    return asyncio.run(score(fam, level, entry, reply, answer_chars(DEFAULT_TOKENS)))


def test_the_scorer_is_reasoning_gyms_own() -> None:
    """Datasets without a strict verifier are judged by their own score_answer (in the
    sandbox): the same scores as reasoning-gym gives in-process."""
    fam = ReasoningGymFamily("leg_counting")
    task = fam.task(1, 7)
    entry = fam.entry(1, task.truth["item_seed"])
    native = reasoning_gym.create_dataset("leg_counting").score_answer
    for answer in (task.truth["answer"], "12 legs", "7", ""):
        outcome = rg_score(fam, 1, entry, f"<answer>{answer}</answer>")
        expected = native(answer or None, entry)
        assert outcome.facts.get("score", 0.0) == pytest.approx(expected) or (
            not answer and outcome.reason == "no_answer"
        )


def test_knights_and_knaves_is_judged_by_the_validity_checker(kk: ReasoningGymFamily) -> None:
    task = kk.task(1, 7)
    entry = kk.entry(1, task.truth["item_seed"])
    outcome = rg_score(kk, 1, entry, f"<answer>{task.truth['answer']}</answer>")
    assert outcome.passed and outcome.facts["verifier"] == "gymforge.knights_knaves"
    assert not rg_score(kk, 1, entry, "<answer>Nobody is anything.</answer>").passed


def test_frame_injection_fools_reasoning_gym_but_not_the_strict_verifier() -> None:
    """The attack is real: reasoning-gym's countdown scorer runs the answer through
    sympy's parse_expr, so an expression that reads the target from the scorer's frame
    scores 1.0 there (and in the sandbox, where it can forge only its own score). The
    strict verifier reads the same text with a parser that evaluates nothing."""
    fam = env_class("countdown").family
    task = fam.task(1, 11)
    entry = fam.entry(1, task.truth["item_seed"])
    crafted = _frame_injection(task)
    assert crafted is not None and "_getframe" in crafted
    inner = crafted.removeprefix("<answer>").removesuffix("</answer>")
    assert FRAME_DEPTH == 3
    assert native_score("countdown", inner, entry) == 1.0  # reasoning-gym alone is fooled
    raw = asyncio.run(score(fam, 1, entry, crafted, 10_000, strict=False))
    assert raw.passed  # the sandbox keeps the host safe, not the score honest
    outcome = rg_score(fam, 1, entry, crafted)
    assert outcome.reason == "parse_error", outcome
    assert outcome.facts["verifier"] == "gymforge.countdown"


SANDBOXED = (
    "binary_matrix",
    "n_queens",
    "number_sorting",
    "polynomial_multiplication",
    "simple_integration",
    "spiral_matrix",
    "string_insertion",
    "time_intervals",
    "word_sorting",
)
"""Scorers that evaluate text, or whose entries or configs hold tuples, enums or dates: the
plain-data encoding must carry them exactly."""


@pytest.mark.parametrize("name", SANDBOXED)
def test_sandboxed_scorers_accept_reasoning_gyms_own_answers(name: str) -> None:
    fam = ReasoningGymFamily(name)
    for seed in range(3):
        task = fam.task(1, seed)
        entry = fam.entry(1, task.truth["item_seed"])
        outcome = rg_score(fam, 1, entry, f"<answer>{task.truth['answer']}</answer>")
        assert outcome.passed, (name, task.task_id, outcome)


def test_an_answer_never_runs_on_the_grading_host(tmp_path: Path) -> None:
    """n_queens' scorer calls eval() on the answer: reasoning-gym alone runs this code."""
    fam = ReasoningGymFamily("n_queens")
    task = fam.task(1, 0)
    entry = fam.entry(1, task.truth["item_seed"])
    marker = tmp_path / "ran"
    payload = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    native_score("n_queens", payload, entry)
    assert marker.exists()  # the attack is real
    marker.unlink()
    outcome = rg_score(fam, 1, entry, f"<answer>{payload}</answer>")
    assert not marker.exists()
    assert not outcome.passed, outcome


def test_the_plain_data_encoding_carries_reasoning_gyms_values() -> None:
    import datetime

    from reasoning_gym.algorithmic.word_sorting import TextTransformation

    value = {
        "t": (1, (2, "x")),
        3: {2, 5},
        "f": frozenset({1}),
        "e": TextTransformation.LOWERCASE,
        "d": datetime.date(2024, 2, 29),
        "$d": [["not", "a tag"]],
        "inf": float("inf"),
    }
    plain = json.loads(json.dumps(inside.encode(value)))
    assert inside.decode(plain) == value
    assert type(inside.decode(plain)["t"]) is tuple
    with pytest.raises(TypeError):
        inside.encode(object())
    with pytest.raises(ValueError, match="refusing"):
        inside.decode({"$c": ["os", "system", {}]})


def test_hedges_and_reasoning_are_not_answers(kk: ReasoningGymFamily) -> None:
    task = kk.task(1, 3)
    entry = kk.entry(1, task.truth["item_seed"])
    gold = task.truth["answer"]
    assert rg_score(kk, 1, entry, f"<answer>x</answer><answer>{gold}</answer>").reason == "hedge"
    assert rg_score(kk, 1, entry, f"<think><answer>{gold}</answer></think>").reason == ("no_answer")


def test_not_applicable_checks_carry_their_reason() -> None:
    """A dataset without a curriculum has no difficulty parameters to hold out; a dataset
    whose stored answer its own scorer does not accept has no oracle."""
    from reasoning_gym.factory import CURRICULA
    from reasoning_gym.factory import DATASETS as RG

    flat = sorted(n for n in RG if n not in CURRICULA)
    assert flat
    profile = env_class(flat[0]).qa
    assert "no reasoning-gym curriculum" in profile.not_applicable["heldout_exclusion"]
    assert env_class("countdown").qa.not_applicable == {}
    no_answer = env_class("propositional_logic").qa.not_applicable
    assert set(no_answer) == {"scripted_baselines", "verifier_redteam", "error_paths"}
    assert "reasoning-gym stores no answer" in no_answer["scripted_baselines"]
    without = QATarget.load("reasoning-gym:propositional_logic")
    assert not without.has_oracle  # the other checks play the random policy instead
    checks = ["replay_determinism", "reset_isolation", "scripted_baselines"]
    report = run_qa(without, QAOptions(episodes=2), only=checks)
    assert report.passed, [c.as_json() for c in report.checks]
    assert [c.applicable for c in report.checks] == [True, True, False]
    target = QATarget.load(f"reasoning-gym:{flat[0]}")
    report = run_qa(target, QAOptions(episodes=2), only=["heldout_exclusion"])
    (check,) = report.checks
    assert check.passed and not check.applicable
    assert "curriculum" in check.details


def test_qa_passes_every_check_on_knights_and_knaves() -> None:
    # 16 episodes: the random baseline scrambles one word of reasoning-gym's sentence
    # answers, often a filler word that leaves the answer right; on 4 tasks that is 2 of 4
    out = cli("qa", "reasoning-gym:knights_knaves", "--episodes", "16", "--json")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    report = json.loads(out.stdout)
    assert report["passed"] and all(c["applicable"] for c in report["checks"])
    assert len(report["checks"]) == 10


@pytest.mark.parametrize("name", ["countdown", "sudoku"])
def test_qa_episode_checks_pass_on_countdown_and_sudoku(name: str) -> None:
    """Everything but the two sampling checks, which generate hundreds of tasks with
    reasoning-gym's slow generators, and the wall-clock throughput check (the full runs are
    the slow tests below)."""
    checks = [
        "replay_determinism",
        "reset_isolation",
        "scripted_baselines",
        "verifier_redteam",
        "truncation_accounting",
        "trajectory_schema",
    ]
    args = [f"--check={c}" for c in checks]
    out = cli("qa", f"reasoning-gym:{name}", "--episodes", "3", "--json", *args)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    report = json.loads(out.stdout)
    assert [c["name"] for c in report["checks"]] == checks
    redteam = next(c for c in report["checks"] if c["name"] == "verifier_redteam")
    assert redteam["metrics"]["exercised"] >= 3


@pytest.mark.slow
@pytest.mark.parametrize("name", ["countdown", "sudoku"])
def test_qa_passes_every_check_on_countdown_and_sudoku(name: str) -> None:
    out = cli("qa", f"reasoning-gym:{name}", "--episodes", "6", "--json", timeout=1800)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert json.loads(out.stdout)["passed"]


def test_eval_and_calibrate_run_on_an_adapted_dataset(tmp_path: Path) -> None:
    out = cli(
        "eval",
        "reasoning-gym:knights_knaves",
        "--policy",
        "oracle",
        "-n",
        "4",
        "--out",
        str(tmp_path / "ev"),
    )
    assert out.returncode == 0, out.stderr[-2000:]
    out = cli(
        "calibrate",
        "reasoning-gym:knights_knaves",
        "--policy",
        "random",
        "-n",
        "4",
        "--out",
        str(tmp_path / "cal"),
    )
    assert out.returncode == 0, out.stderr[-2000:]


def test_metadata_becomes_plain_json() -> None:
    import numpy as np

    from gymforge.envs.reasoning_gym.family import jsonable

    value = {"a": np.arange(3), "b": (np.str_("x"), np.float64(1.5)), 3: {np.bool_(True)}}
    assert jsonable(value) == {"a": [0, 1, 2], "b": ["x", 1.5], "3": [True]}
