"""Lax reasoning-gym scorers: the generic attacks of the adapter's red team, and the strict
verifier that countdown and puzzle24 are judged by.

reasoning-gym's countdown scorer pays ``(n1+n2+...)*(log(E)-log(E)) + <target from log(E)>``
and its puzzle24 scorer pays ``6+6+6+6``; QA must fail both datasets when they are judged by
that scorer, and pass them when they are judged by gymforge's strict countdown checker.
"""

from __future__ import annotations

import asyncio
import os

import pytest

from gymforge.envs.reasoning_gym import env_class
from gymforge.envs.reasoning_gym.env import DEFAULT_TOKENS
from gymforge.envs.reasoning_gym.redteam import GENERIC, numbers_and_target
from gymforge.envs.reasoning_gym.scoring import answer_chars, score
from gymforge.qa import QATarget, run_qa
from gymforge.qa.checks.common import QAOptions

CRAFT = {case.name: case for case in GENERIC}


@pytest.fixture(autouse=True)
def _scorer_uids(monkeypatch: pytest.MonkeyPatch) -> None:
    base = 100_000 + (os.getpid() % 5000) * 100 + 40 - 64
    monkeypatch.setenv("GYMFORGE_SANDBOX_UID_BASE", str(base))


LEVEL = {"countdown": 1, "puzzle24": 3}
"""puzzle24's level 1 draws numbers up to 5 only, and its scorer wants four numbers in that
range: ``6+6+6+6`` is paid from level 2 on."""


def crafted(name: str, dataset: str, seed: int) -> tuple[str, object]:
    """The reply attack ``name`` makes for task ``seed`` of ``dataset`` (at ``LEVEL``)."""
    fam = env_class(dataset).family
    task = fam.task(LEVEL[dataset], seed)
    policy = CRAFT[name].make_policy()
    reply = policy.from_task(task)  # type: ignore[attr-defined]
    assert reply is not None, (name, task.task_id)
    return reply, task


def judged(dataset: str, task: object, reply: str, strict: bool) -> object:
    fam = env_class(dataset).family
    truth = fam.truth_of(task)  # type: ignore[arg-type]
    entry = fam.entry(truth.level, truth.item_seed)
    limit = answer_chars(DEFAULT_TOKENS)
    return asyncio.run(score(fam, truth.level, entry, reply, limit, strict))


@pytest.mark.parametrize(
    ("dataset", "attack"),
    [("countdown", "identity_to_target"), ("puzzle24", "target_without_numbers")],
)
def test_reasoning_gyms_own_scorer_pays_the_attack_and_the_strict_verifier_does_not(
    dataset: str, attack: str
) -> None:
    paid = 0
    for seed in range(4):
        reply, task = crafted(attack, dataset, seed)
        raw = judged(dataset, task, reply, strict=False)
        paid += raw.passed  # type: ignore[attr-defined]
        strict = judged(dataset, task, reply, strict=True)
        assert not strict.passed, (reply, strict)  # type: ignore[attr-defined]
    assert paid >= 3, f"reasoning-gym's {dataset} scorer paid {paid}/4 (the finding is gone?)"


def test_puzzle24_attack_is_the_constant_from_the_issue() -> None:
    reply, task = crafted("target_without_numbers", "puzzle24", 0)
    numbers, target = numbers_and_target(task)  # type: ignore[arg-type,misc]
    assert target == 24
    if 6 not in numbers:
        assert reply == "<answer>6+6+6+6</answer>"


@pytest.mark.slow  # 36 episodes of attacks, each answer a sandbox job: a minute or more
@pytest.mark.parametrize("dataset", ["countdown", "puzzle24"])
def test_qa_fails_the_raw_scorer_and_passes_the_strict_verifier(dataset: str) -> None:
    opts = QAOptions(episodes=36)
    raw = QATarget.from_factory(lambda: env_class(dataset, strict=False)(), ref="raw")
    report = run_qa(raw, opts, only=["verifier_redteam"])
    (check,) = report.checks
    assert not check.passed, check.details
    assert "env.identity_to_target" in check.metrics["breached"], check.metrics
    if dataset == "puzzle24":
        assert "env.target_without_numbers" in check.metrics["breached"], check.metrics
    strict = QATarget.from_factory(lambda: env_class(dataset)(), ref="strict")
    report = run_qa(strict, opts, only=["verifier_redteam", "scripted_baselines"])
    assert report.passed, [c.as_json() for c in report.checks]


def test_stored_answers_the_verifier_refuses_fail_qa_naming_the_task(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A verifier that refuses reasoning-gym's own answers (here: leg_counting checked as a
    countdown over numbers its answers never use) must fail QA, not pass with the oracle's
    checks declared not applicable."""
    from gymforge.envs.puzzles import countdown
    from gymforge.envs.reasoning_gym import strict

    truth = countdown.CountdownTruth(numbers=[1], target=2, use_all=True)
    monkeypatch.setitem(strict.STRICT, "leg_counting", (countdown.FAMILY, lambda e: truth))
    monkeypatch.setitem(strict.VERIFIER_NAMES, "leg_counting", "gymforge.countdown")
    cls = env_class.__wrapped__("leg_counting")  # type: ignore[attr-defined]
    assert "scripted_baselines" not in cls.qa.not_applicable
    assert "Its stored answers fail" in cls.spec.description
    target = QATarget.from_factory(lambda: cls(), ref="refused")
    report = run_qa(target, QAOptions(episodes=6), only=["scripted_baselines"])
    (check,) = report.checks
    assert not check.passed and check.applicable, check.details
    assert "first: " in check.details and "reasoning_gym.leg_counting/" in check.details
