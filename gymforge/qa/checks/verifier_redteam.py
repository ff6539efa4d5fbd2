"""verifier_redteam: hand-built passing failures must all be rejected.

Runs every generic attack for the environment's declared verifier kinds
(``QAProfile.verifier_kinds``) and every environment-specific ``RedTeamCase`` on several
tasks. Any attack judged a success is a breach, and any attack whose verdict is a crash of
the verifier (``verifier_error: <exception>``: recorded as a failure, so it looks rejected)
is a finding too: a verifier that cannot judge an answer fails right answers written the
same way. Attacks that cannot be built for a task
(``AttackNotApplicable``) are not counted; if no attack could be exercised at all, the check
has nothing to test and fails.

An attack that fails may still be paid: a verdict's partial ``score`` that the reward pays
(``StandardReward(partial_credit=True)``), a format bonus, shaped components. The mean
reward an attack *earned* on the episodes it failed (its positive component totals, costs
left out: ``scripted_baselines.earned``) must stay within ``baselines.redteam_reward_max``
(by default ``bad_reward_max``, the ceiling the environment declares for a near miss its
reward pays by design; default 0).
Judged on ``success`` alone, "12 or 13" paid 0.8 of a solve by partial credit passed.

The tasks: the sample ``jobs`` draws (one per task source at least, up to
``MAX_SOURCES_COVERED`` sources), then, for every family, a held-out task when the sample
has none of that family and it holds any out, then a task of every difficulty level the
sample lacks (``strata``; at most ``MAX_STRATA`` tasks in all). A verifier defect confined
to the held-out region or one level (a held-out judge that passes the empty reply) was
drawn by chance before, and the baselines, on training tasks, never see held-out ones.

The ``stall_then_claim`` attack (``gymforge.kit.stall``) reads harmlessly until one step of
the budget is left, then claims: a verdict that depends on how long the episode ran (any
reply from the sixth step on) passed every other attack, each replying within the
oracle's few steps.

What it cannot catch: attacks nobody wrote. The generic ones (including the ``claim_echo``
family, which echoes the task back as a claim) find verifiers that trust replies or skip
state; a shortcut specific to the domain needs its own ``RedTeamCase``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gymforge.core.env import Environment
from gymforge.core.errors import InfraError, UnknownTaskError
from gymforge.core.policy import Policy
from gymforge.core.seeding import derive_seed
from gymforge.kit.redteam import AttackNotApplicable, attacks_for, case_attacks
from gymforge.qa.checks.common import (
    CheckFailed,
    NothingToTest,
    QAOptions,
    jobs,
    need_oracle,
    run_async,
)
from gymforge.qa.checks.scripted_baselines import earned
from gymforge.qa.episodes import play
from gymforge.qa.target import QATarget
from gymforge.trajectory.outcome import is_verifier_error

NAME = "verifier_redteam"


@dataclass
class AttackOutcome:
    """How one attack fared: episodes it could run on, tasks it broke, failure reasons."""

    ran: int = 0
    breaches: list[str] = field(default_factory=list)
    crashes: list[str] = field(default_factory=list)
    """``<failure reason> on <task id>`` of each episode the verifier crashed on."""
    reasons: set[str | None] = field(default_factory=set)
    paid: list[float] = field(default_factory=list)
    """What each failed episode earned beyond its costs (``scripted_baselines.earned``)."""

    @property
    def mean_paid(self) -> float:
        return sum(self.paid) / len(self.paid) if self.paid else 0.0


async def run_attack(
    make_env: Callable[[], Environment],
    make_policy: Callable[[], Policy],
    pairs: Sequence[tuple[str, int]],
) -> AttackOutcome:
    """Play one attack policy on every ``(task_id, seed)`` on one reused environment.
    Tasks where the attack cannot be built (``AttackNotApplicable``) are skipped."""
    env = make_env()
    out = AttackOutcome()
    try:
        for task_id, seed in pairs:
            try:
                records = await play(env, make_policy(), task_id, seed, tag="redteam")
            except InfraError as err:
                if isinstance(err.__cause__, AttackNotApplicable):
                    continue
                raise
            out.ran += 1
            reason = records[-1]["failure_reason"]
            out.reasons.add(reason)
            if is_verifier_error(reason):
                out.crashes.append(f"{reason} on {task_id}")
            if records[-1]["success"]:
                out.breaches.append(task_id)
            else:
                out.paid.append(earned(records))
    finally:
        await env.close()
    return out


MAX_SOURCES_COVERED = 12
"""Up to this many task sources (families and datasets), the check draws one task from each
at least: an attack written for one family (a ``RedTeamCase`` that is not applicable
elsewhere) then runs on it. Sampling visits the sources in turn, so four tasks of five
puzzle families never held a colouring, and its three cases never ran."""


def _tasks_wanted(target: QATarget, opts: QAOptions) -> int:
    n = max(3, opts.episodes // 6)
    tasks = target.tasks
    sources = 0 if tasks is None else len(tasks.families) + len(tasks.datasets)
    return max(n, sources) if sources <= MAX_SOURCES_COVERED else n


MAX_STRATA = 32
"""The most tasks ``strata`` brings the sample to: a held-out task of every family, then one
of every difficulty level (32 covers every built-in environment's families and levels)."""


def _draw(target: QATarget, seed: int, split: Any, levels: Any, family: str) -> str | None:
    tasks = target.tasks
    assert tasks is not None
    try:
        return str(tasks.sample(1, seed, split, levels, [family])[0])
    except UnknownTaskError:  # the family holds nothing out, or the level is empty
        return None


def strata(target: QATarget, pairs: list[tuple[str, int]], seed: int) -> list[tuple[str, int]]:
    """``pairs`` plus, while fewer than ``MAX_STRATA``, a held-out task of every family the
    pairs hold none of (when it holds any out; of a level they lack where it can, so that
    one task covers both), then a task of every (family, level) they still lack; each drawn
    with its own seed, deterministically."""
    tasks = target.tasks
    if tasks is None or len(pairs) >= MAX_STRATA:
        return list(pairs)
    out = list(pairs)
    seen = [tasks.resolve(t) for t, _ in pairs]
    held = {t.family for t in seen if t.split == "heldout"}
    levels = {(t.family, t.difficulty) for t in seen}

    def add(family: str, split: Any, level: int | None) -> bool:
        stratum_seed = derive_seed("qa-redteam-stratum", family, split, str(level), seed)
        wanted = None if level is None else [level]
        task_id = _draw(target, stratum_seed % 2**31, split, wanted, family)
        if task_id is None or any(task_id == t for t, _ in out):
            return False
        out.append((task_id, derive_seed("qa-episode", task_id, seed) % 2**31))
        levels.add((family, tasks.resolve(task_id).difficulty))
        return True

    for family, fam in sorted(tasks.families.items()):
        if family in held or len(out) >= MAX_STRATA:
            continue
        lacking = [d for d in sorted(fam.levels) if (family, d) not in levels]
        if not any(add(family, "heldout", d) for d in lacking):
            add(family, "heldout", None)
    for family, fam in sorted(tasks.families.items()):
        for d in sorted(fam.levels):
            if (family, d) not in levels and len(out) < MAX_STRATA:
                add(family, "all", d)
    return out


def run(target: QATarget, opts: QAOptions) -> tuple[str, dict[str, Any]]:
    need_oracle(target)
    profile = target.profile
    attacks = attacks_for(profile.verifier_kinds) + case_attacks(profile.redteam)
    if not attacks:
        raise NothingToTest("declare QAProfile.verifier_kinds and/or redteam cases")
    pairs = strata(
        target, jobs(target, _tasks_wanted(target, opts), opts.seed + 3, "all"), opts.seed + 3
    )
    b = profile.baselines
    ceiling = b.bad_reward_max if b.redteam_reward_max is None else b.redteam_reward_max
    exercised, episodes, breached, unused = 0, 0, {}, []
    paid: dict[str, float] = {}
    crashed: dict[str, list[str]] = {}
    for attack in attacks:
        outcome = run_async(run_attack(target.factory, attack.make_policy, pairs))
        ran, breaches = outcome.ran, outcome.breaches
        episodes += ran
        exercised += ran > 0
        if not ran:
            unused.append(attack.name)
        if breaches:
            breached[attack.name] = breaches
        if outcome.crashes:
            crashed[attack.name] = outcome.crashes
        if outcome.mean_paid > ceiling + 1e-9:
            paid[attack.name] = outcome.mean_paid
    metrics = {
        "attacks": len(attacks),
        "exercised": exercised,
        "episodes": episodes,
        "breached": sorted(breached),
        "verifier_crashed": sorted(crashed),
        "not_applicable": unused,
        "tasks": len(pairs),
        "heldout_tasks": sum(target.tasks.resolve(t).split == "heldout" for t, _ in pairs)
        if target.tasks is not None
        else 0,
        "paid_for_failing": paid,
        "redteam_reward_max": ceiling,
    }
    problems = []
    if breached:
        worst = "; ".join(
            f"{name} passed on {ids[0]}" + (f" (+{len(ids) - 1} more)" if len(ids) > 1 else "")
            for name, ids in sorted(breached.items())
        )
        problems.append(f"{len(breached)} of {exercised} attacks were judged a success: {worst}")
    if crashed:
        worst = "; ".join(
            f"{name}: {found[0]}" + (f" (+{len(found) - 1} more)" if len(found) > 1 else "")
            for name, found in sorted(crashed.items())
        )
        problems.append(
            f"the verifier crashed on the answers of {len(crashed)} of {exercised} attacks "
            f"(a crash is recorded as a failure, and fails right answers written alike): {worst}"
        )
    if paid:
        worst = "; ".join(f"{name} earned {value:.3f}" for name, value in sorted(paid.items()))
        problems.append(
            f"{len(paid)} of {exercised} attacks were paid for failing (mean earned per failed "
            f"episode beyond costs > its ceiling {ceiling}, baselines.redteam_reward_max or "
            f"else bad_reward_max: a partial score, "
            f"bonus or shaping that pays a wrong answer): {worst}"
        )
    if problems:
        raise CheckFailed("; ".join(problems), metrics)
    if not exercised:
        raise NothingToTest("no attack could be built for any task")
    note = f"; not applicable here: {', '.join(unused)}" if unused else ""
    return (
        f"all {exercised} attacks rejected and paid at most {ceiling} when failing, over "
        f"{episodes} episodes of {len(pairs)} tasks ({metrics['heldout_tasks']} held out){note}",
        metrics,
    )
