"""scripted_baselines: the oracle scores high, a known-bad agent low, a do-nothing agent ~0.

Thresholds come from the environment's ``QAProfile.baselines`` (defaults: oracle >= 0.95,
bad <= 0.2, noop <= 0.05 success on training tasks). The noop agent's mean ``task``
component must also stay at or below its threshold.

What it cannot catch: a verifier a smarter agent can fool (``verifier_redteam`` tries),
tasks only the oracle's exact path solves, or thresholds declared too loosely.
"""

from __future__ import annotations

from typing import Any

from gymforge.qa.checks.common import (
    CheckFailed,
    QAOptions,
    jobs,
    need_oracle,
    play_many,
    run_async,
    success_rate,
)
from gymforge.qa.target import QATarget

NAME = "scripted_baselines"


def run(target: QATarget, opts: QAOptions) -> tuple[str, dict[str, Any]]:
    need_oracle(target)
    b = target.profile.baselines
    pairs = jobs(target, opts.episodes, opts.seed + 2, "train")
    rates = {}
    noop_task = 0.0
    oracle_misses: list[str] = []
    for label, policy in (("oracle", "oracle"), ("bad", b.bad_policy), ("noop", "noop")):
        episodes = run_async(play_many(target, policy, pairs))
        rates[label] = success_rate(episodes)
        if label == "oracle":
            oracle_misses = [
                f"{e[-1].get('failure_reason')} on {e[-1].get('task_id')}"
                for e in episodes
                if not e[-1]["success"]
            ]
        if label == "noop":
            noop_task = sum(e[-1]["reward_components"].get("task", 0.0) for e in episodes) / len(
                episodes
            )
    metrics = {
        "oracle": rates["oracle"],
        "bad": rates["bad"],
        "noop": rates["noop"],
        "noop_mean_task": noop_task,
        "episodes_each": len(pairs),
    }
    problems = []
    if rates["oracle"] < b.oracle_min:
        first = f" (first: {oracle_misses[0]})" if oracle_misses else ""
        problems.append(f"oracle success {rates['oracle']:.0%} < {b.oracle_min:.0%}{first}")
    if rates["bad"] > b.bad_max:
        problems.append(f"{b.bad_policy} success {rates['bad']:.0%} > {b.bad_max:.0%}")
    if rates["noop"] > b.noop_max or noop_task > b.noop_max:
        problems.append(
            f"noop success {rates['noop']:.0%} / mean task reward {noop_task:.3f} > {b.noop_max}"
        )
    summary = (
        f"oracle {rates['oracle']:.0%} (>= {b.oracle_min:.0%}), {b.bad_policy} "
        f"{rates['bad']:.0%} (<= {b.bad_max:.0%}), noop {rates['noop']:.0%} "
        f"(<= {b.noop_max:.0%}) over {len(pairs)} training tasks"
    )
    if problems:
        raise CheckFailed("; ".join(problems) + f" [{summary}]", metrics)
    return summary, metrics
