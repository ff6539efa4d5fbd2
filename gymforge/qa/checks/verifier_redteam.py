"""verifier_redteam: hand-built passing failures must all be rejected.

Runs every generic attack for the environment's declared verifier kinds
(``QAProfile.verifier_kinds``) and every environment-specific ``RedTeamCase`` on several
tasks. Any attack judged a success is a breach. Attacks that cannot be built for a task
(``AttackNotApplicable``) are not counted; if no attack could be exercised at all, the check
has nothing to test and fails.
"""

from __future__ import annotations

from typing import Any

from gymforge.core.errors import InfraError
from gymforge.qa.checks.common import (
    CheckFailed,
    NothingToTest,
    QAOptions,
    jobs,
    need_oracle,
    play,
    run_async,
)
from gymforge.qa.redteam import Attack, AttackNotApplicable, attacks_for, case_attacks
from gymforge.qa.target import QATarget

NAME = "verifier_redteam"


async def _attack(
    target: QATarget, attack: Attack, pairs: list[tuple[str, int]]
) -> tuple[int, list[str]]:
    env = target.factory()
    ran, breaches = 0, []
    try:
        for task_id, seed in pairs:
            try:
                records = await play(env, attack.make_policy(), task_id, seed, tag="redteam")
            except InfraError as err:
                if isinstance(err.__cause__, AttackNotApplicable):
                    continue
                raise
            ran += 1
            if records[-1]["success"]:
                breaches.append(task_id)
    finally:
        await env.close()
    return ran, breaches


def run(target: QATarget, opts: QAOptions) -> tuple[str, dict[str, Any]]:
    need_oracle(target)
    profile = target.profile
    attacks = attacks_for(profile.verifier_kinds) + case_attacks(profile.redteam)
    if not attacks:
        raise NothingToTest("declare QAProfile.verifier_kinds and/or redteam cases")
    pairs = jobs(target, max(3, opts.episodes // 6), opts.seed + 3, "all")
    exercised, episodes, breached, unused = 0, 0, {}, []
    for attack in attacks:
        ran, breaches = run_async(_attack(target, attack, pairs))
        episodes += ran
        exercised += ran > 0
        if not ran:
            unused.append(attack.name)
        if breaches:
            breached[attack.name] = breaches
    metrics = {
        "attacks": len(attacks),
        "exercised": exercised,
        "episodes": episodes,
        "breached": sorted(breached),
        "not_applicable": unused,
    }
    if breached:
        worst = "; ".join(
            f"{name} passed on {ids[0]}" + (f" (+{len(ids) - 1} more)" if len(ids) > 1 else "")
            for name, ids in sorted(breached.items())
        )
        raise CheckFailed(
            f"{len(breached)} of {exercised} attacks were judged a success: {worst}", metrics
        )
    if not exercised:
        raise NothingToTest("no attack could be built for any task")
    note = f"; not applicable here: {', '.join(unused)}" if unused else ""
    return f"all {exercised} attacks rejected over {episodes} episodes{note}", metrics
