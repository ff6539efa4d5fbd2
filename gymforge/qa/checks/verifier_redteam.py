"""verifier_redteam: hand-built passing failures must all be rejected.

Runs every generic attack for the environment's declared verifier kinds
(``QAProfile.verifier_kinds``) and every environment-specific ``RedTeamCase`` on several
tasks. Any attack judged a success is a breach, and any attack whose verdict is a crash of
the verifier (``verifier_error: <exception>``: recorded as a failure, so it looks rejected)
is a finding too: a verifier that cannot judge an answer fails right answers written the
same way. Attacks that cannot be built for a task
(``AttackNotApplicable``) are not counted; if no attack could be exercised at all, the check
has nothing to test and fails.

What it cannot catch: attacks nobody wrote. The generic ones (including the ``claim_echo``
family, which echoes the task back as a claim) find verifiers that trust replies or skip
state; a shortcut specific to the domain needs its own ``RedTeamCase``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gymforge.core.env import Environment
from gymforge.core.errors import InfraError
from gymforge.core.policy import Policy
from gymforge.kit.redteam import AttackNotApplicable, attacks_for, case_attacks
from gymforge.qa.checks.common import (
    CheckFailed,
    NothingToTest,
    QAOptions,
    jobs,
    need_oracle,
    run_async,
)
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


def run(target: QATarget, opts: QAOptions) -> tuple[str, dict[str, Any]]:
    need_oracle(target)
    profile = target.profile
    attacks = attacks_for(profile.verifier_kinds) + case_attacks(profile.redteam)
    if not attacks:
        raise NothingToTest("declare QAProfile.verifier_kinds and/or redteam cases")
    pairs = jobs(target, _tasks_wanted(target, opts), opts.seed + 3, "all")
    exercised, episodes, breached, unused = 0, 0, {}, []
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
    metrics = {
        "attacks": len(attacks),
        "exercised": exercised,
        "episodes": episodes,
        "breached": sorted(breached),
        "verifier_crashed": sorted(crashed),
        "not_applicable": unused,
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
    if problems:
        raise CheckFailed("; ".join(problems), metrics)
    if not exercised:
        raise NothingToTest("no attack could be built for any task")
    note = f"; not applicable here: {', '.join(unused)}" if unused else ""
    return f"all {exercised} attacks rejected over {episodes} episodes{note}", metrics
