"""scripted_baselines: the oracle scores high, a known-bad agent low, a do-nothing agent ~0.

Thresholds come from the environment's ``QAProfile.baselines`` (defaults: oracle >= 0.95,
bad <= 0.2, noop <= 0.05 success on training tasks). The noop agent's mean ``task``
component must also stay at or below its threshold. Success is not the only thing a policy
is trained on: the reward is. So the noop and bad agents' mean *earned* reward on the
episodes they failed (the positive component totals: what the environment paid; costs and
penalties total below zero and do not count) must stay at or below the profile's
``baselines.noop_reward_max`` and ``bad_reward_max`` (default 0): an environment that pays
doing nothing (a "tidiness" bonus, a partial score for an untouched workspace) teaches doing
nothing. A near-miss agent (``near_miss``: the oracle's path, its replies scrambled: the
answer's form with other content) must earn nothing on the episodes it fails, so a format
bonus that pays a wrong answer in the right form is seen on tool environments too, where the
random agent seldom replies in that form (without tools the random agent already answers
in the oracle's form, scrambled, and is that near miss). It runs where the environment pays
no near miss by design (``bad_reward_max`` 0); a declared ceiling was measured on the
declared bad agent, which keeps judging it. A verbose near miss (``verbose_near_miss``:
the same answers behind ~600 characters of neutral prose) runs everywhere, and may earn no
more than ``bad_reward_max`` or the same answers written briefly, whichever is more: every
other agent replies briefly, so a reward that pays a long reply whatever it says (a
"showed its work" bonus from some length on) was never paid to one. And solving must pay more than
not: the oracle's mean reward (the episode's total, costs included) must exceed the noop's
and the bad agent's, or an environment whose costs or penalties fall on success (a fee per
passed verdict, step costs that outweigh the task reward on the oracle's path) teaches
doing nothing while every rate and ceiling looks right. Last, the correct answer must depend
on the task: a constant-answer agent (``constant_answer``: the oracle actions of the task
whose answer is the most common over the sampled tasks, replayed on every other task) may
solve at most ``baselines.constant_max`` of them (default 0.9: an answer that does not
depend on the task fails, one right by chance in a small answer space does not).

What it cannot catch: a verifier a smarter agent can fool (``verifier_redteam`` tries),
tasks only the oracle's exact path solves, a format bonus in an environment that declares a
near-miss ceiling (its bad agent must reach the bonus), reward paid to a policy smarter
than random but short of solving, thresholds and ceilings declared too loosely, or what
``constant_answer`` lists (a constant no sampled task's oracle gives, a share too small
for the sample to see).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from gymforge.core.capabilities import TOOLSET, supported
from gymforge.core.policy import Policy
from gymforge.core.seeding import derive_seed
from gymforge.kit.redteam import CraftedReply
from gymforge.qa.checks.common import (
    CheckFailed,
    QAOptions,
    jobs,
    need_oracle,
    play_many,
    run_async,
    short,
    success_rate,
)
from gymforge.qa.checks.constant_answer import (
    FAMILY_CONFIRM,
    FAMILY_MIN,
    Donor,
    FamilyConstant,
    ReplayActions,
    by_family,
    choose_donor,
    others,
)
from gymforge.qa.target import QATarget
from gymforge.rollout.scripted import scramble

NAME = "scripted_baselines"


def earned(episode: Sequence[dict[str, Any]]) -> float:
    """What an episode was paid beyond its costs: the sum of its components' positive
    totals (the episode record's per-component sums; shaping that nets to zero earns 0)."""
    totals = episode[-1].get("reward_components", {})
    return float(sum(value for value in totals.values() if value > 0))


def mean_earned_when_failed(episodes: Sequence[Sequence[dict[str, Any]]]) -> float:
    """The mean earned reward over the episodes that did not succeed (0 when none)."""
    failed = [e for e in episodes if not e[-1]["success"]]
    return sum(earned(e) for e in failed) / len(failed) if failed else 0.0


def mean_reward(episodes: Sequence[Sequence[dict[str, Any]]]) -> float:
    """The mean of the episodes' total rewards (costs and penalties included)."""
    return sum(float(e[-1]["reward"]) for e in episodes) / len(episodes) if episodes else 0.0


def near_miss() -> Policy:
    """The oracle's path with every reply scrambled (seeded by the reply's text): the form
    of the answer kept, its content changed (``gymforge.rollout.scripted.scramble``)."""
    return CraftedReply(lambda text: scramble(text, random.Random(derive_seed("near-miss", text))))


PADDING = "Let me work through this carefully, checking each step before I answer. " * 8
"""What the verbose near miss writes before its scrambled answer: ~600 characters of neutral
prose, no digits, no claim of success (about 120 tokens, inside every built-in budget)."""


def verbose_near_miss() -> Policy:
    """The near miss written at length: ``PADDING``, then the scrambled answer. A reward that
    pays a long reply (a "showed its work" bonus from some length on) pays this failure;
    every other baseline replies briefly."""
    return CraftedReply(
        lambda text: (
            PADDING + "\n\n" + scramble(text, random.Random(derive_seed("near-miss", text)))
        )
    )


def has_tools(target: QATarget) -> bool:
    """Whether the environment offers tools: without them, the random agent replies in the
    oracle's form already (``gymforge.rollout.scripted``), so it is the near miss."""
    probe = target.factory()
    try:
        found = supported(probe, TOOLSET)
        return found is not None and bool(found.toolset.tools)
    finally:
        run_async(probe.close())


def constant_rate(
    target: QATarget, donor: Donor | None, pairs: Sequence[tuple[str, int]]
) -> float | None:
    """The constant-answer agent's success rate on the tasks other than the donor's
    (``gymforge.qa.checks.constant_answer``); None when there is no donor or no other task.
    They are played on one instance right after the donor's own task (its oracle actions,
    solved), as a trainer reuses instances: a verdict that survives ``reset`` (a memo keyed
    by the reply) pays the donor's answer on every later task there."""
    if donor is None or not (rest := others(pairs, donor)):
        return None
    mine = (donor.task_id, pairs[donor.index][1])
    played = run_async(play_many(target, partial(ReplayActions, donor.actions), [mine, *rest]))
    return success_rate(played[1:])


def fresh_constant_rate(target: QATarget, donor: Donor, pairs: Sequence[tuple[str, int]]) -> float:
    """The same replays, each on an instance of its own (played only to tell a constant
    answer from one an earlier episode made right)."""
    make = partial(ReplayActions, donor.actions)
    played = [run_async(play_many(target, make, [p]))[0] for p in others(pairs, donor)]
    return success_rate(played)


def family_constants(
    target: QATarget,
    oracle: Sequence[Sequence[dict[str, Any]]],
    pairs: Sequence[tuple[str, int]],
    ceiling: float,
    seed: int,
) -> list[FamilyConstant]:
    """Per family (two or more families, ``FAMILY_MIN`` sampled tasks or more): its own most
    common oracle answer replayed on its other sampled tasks; above ``ceiling`` there, on
    ``FAMILY_CONFIRM`` fresh training tasks of the family too. A constant confined to one
    family is right on a small share of the pooled sample, so the pooled baseline misses it."""
    tasks = target.tasks
    if tasks is None or len(tasks.families) < 2:
        return []
    families = [tasks.resolve(task_id).family for task_id, _ in pairs]
    found = []
    for family, where in sorted(by_family(families, oracle).items()):
        if len(where) < FAMILY_MIN or family in target.profile.baselines.constant_families:
            continue
        donor = choose_donor([oracle[i] for i in where])
        mine = [pairs[i] for i in where]
        if donor is None or not (rest := others(mine, donor)):
            continue
        replay = partial(ReplayActions, donor.actions)
        rate = success_rate(run_async(play_many(target, replay, rest)))
        if rate <= ceiling:
            continue
        sampled = {task_id for task_id, _ in pairs}
        drawn = tasks.sample(FAMILY_CONFIRM + len(where), seed, "train", None, [family])
        fresh = [t for t in drawn if t not in sampled][:FAMILY_CONFIRM]
        more = [(t, derive_seed("qa-episode", t, seed) % 2**31) for t in fresh]
        confirmed = success_rate(run_async(play_many(target, replay, more)))
        if confirmed > ceiling:
            found.append(FamilyConstant(family, donor, rate, confirmed, len(more)))
    return found


def run(target: QATarget, opts: QAOptions) -> tuple[str, dict[str, Any]]:
    need_oracle(target)
    b = target.profile.baselines
    pairs = jobs(target, opts.episodes, opts.seed + 2, "train")
    rates = {}
    paid: dict[str, float] = {}
    rewards: dict[str, float] = {}
    noop_task = 0.0
    oracle_misses: list[str] = []
    donor: Donor | None = None
    oracle_eps: list[list[dict[str, Any]]] = []
    policies: tuple[tuple[str, str | Callable[[], Policy]], ...] = (
        ("oracle", "oracle"),
        ("bad", b.bad_policy),
        ("noop", "noop"),
        ("near_miss", near_miss),
        ("verbose_near_miss", verbose_near_miss),
    )
    judge_near_miss = b.bad_reward_max == 0 and has_tools(target)
    for label, policy in policies:
        episodes = run_async(play_many(target, policy, pairs))
        rates[label] = success_rate(episodes)
        paid[label] = mean_earned_when_failed(episodes)
        rewards[label] = mean_reward(episodes)
        if label == "oracle":
            oracle_eps = episodes
            oracle_misses = [
                f"{e[-1].get('failure_reason')} on {e[-1].get('task_id')}"
                for e in episodes
                if not e[-1]["success"]
            ]
            donor = choose_donor(episodes)
        if label == "noop":
            noop_task = sum(e[-1]["reward_components"].get("task", 0.0) for e in episodes) / len(
                episodes
            )
    constant = constant_rate(target, donor, pairs)
    per_family = family_constants(target, oracle_eps, pairs, b.constant_max, opts.seed + 2)
    metrics = {
        "oracle": rates["oracle"],
        "bad": rates["bad"],
        "noop": rates["noop"],
        "noop_mean_task": noop_task,
        "bad_mean_earned_failed": paid["bad"],
        "near_miss_mean_earned_failed": paid.get("near_miss"),
        "verbose_near_miss_mean_earned_failed": paid["verbose_near_miss"],
        "noop_mean_earned_failed": paid["noop"],
        "noop_reward_max": b.noop_reward_max,
        "bad_reward_max": b.bad_reward_max,
        "oracle_mean_reward": rewards["oracle"],
        "bad_mean_reward": rewards["bad"],
        "noop_mean_reward": rewards["noop"],
        "episodes_each": len(pairs),
        "constant": constant,
        "constant_answer": donor.answer if donor is not None else None,
        "constant_answer_share": donor.share if donor is not None else None,
        "constant_max": b.constant_max,
        "family_constants": {f.family: f.confirmed_rate for f in per_family},
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
    ceilings = {"noop": b.noop_reward_max, "bad": b.bad_reward_max}
    ceilings["near_miss"] = b.bad_reward_max
    judged = [("noop", "noop"), ("bad", b.bad_policy)]
    judged += [("near_miss", "near_miss")] if judge_near_miss else []
    for label, name in judged:
        if paid[label] > ceilings[label] + 1e-9:
            problems.append(
                f"{name} earned {paid[label]:.3f} per failed episode beyond costs > its "
                f"ceiling {ceilings[label]} (failing must not pay; declare baselines."
                f"{'noop' if label == 'noop' else 'bad'}_reward_max only for a near miss "
                "the reward pays by design)"
            )
    verbose, brief = paid["verbose_near_miss"], paid["near_miss"]
    if verbose > max(b.bad_reward_max, brief) + 1e-9:
        problems.append(
            f"verbose_near_miss earned {verbose:.3f} per failed episode beyond costs > the "
            f"same answers written briefly ({brief:.3f}) and bad_reward_max "
            f"{b.bad_reward_max}: a long reply is paid for its length, whatever it says"
        )
    for label, name in (("noop", "noop"), ("bad", b.bad_policy)):
        if rewards["oracle"] <= rewards[label]:
            problems.append(
                f"the oracle's mean reward {rewards['oracle']:.3f} is not above {name}'s "
                f"{rewards[label]:.3f}: solving must pay more than not solving"
            )
    if donor is not None and constant is not None and constant > b.constant_max:
        fresh = fresh_constant_rate(target, donor, pairs)
        metrics["constant_fresh"] = fresh
        if fresh <= b.constant_max:
            problems.append(
                f"answer {short(donor.answer, 60)}, right on task {donor.task_id}, replayed with "
                f"its oracle actions on the same instance right after, solved {constant:.0%} "
                f"of the other tasks, {fresh:.0%} on fresh instances: an earlier episode's "
                "answer is paid on later ones (a verdict or cache that survives reset)"
            )
        else:
            problems.append(
                f"constant answer {short(donor.answer, 60)} (the oracle's answer on "
                f"{donor.count} of {donor.sampled} sampled tasks), replayed with task "
                f"{donor.task_id}'s oracle actions, solved {constant:.0%} of the other tasks "
                f"> {b.constant_max:.0%}: the correct answer does not depend on the task "
                "(declare a higher baselines.constant_max only where most tasks share one "
                "answer by design)"
            )
    for f in per_family:
        problems.append(
            f"family {f.family}: constant answer {short(f.donor.answer, 60)} (the oracle's "
            f"answer on {f.donor.count} of its {f.donor.sampled} sampled tasks), replayed with "
            f"task {f.donor.task_id}'s oracle actions, solved {f.sampled_rate:.0%} of its other "
            f"sampled tasks and {f.confirmed_rate:.0%} of {f.confirmed_on} more > "
            f"{b.constant_max:.0%}: that family's correct answer does not depend on the task"
        )
    summary = (
        f"oracle {rates['oracle']:.0%} (>= {b.oracle_min:.0%}), {b.bad_policy} "
        f"{rates['bad']:.0%} (<= {b.bad_max:.0%}), noop {rates['noop']:.0%} "
        f"(<= {b.noop_max:.0%}); earned per failed episode: noop {paid['noop']:.3f} "
        f"(<= {b.noop_reward_max}), {b.bad_policy} {paid['bad']:.3f} (<= {b.bad_reward_max})"
        + f", near_miss {paid['near_miss']:.3f}"
        + f", verbose_near_miss {paid['verbose_near_miss']:.3f}"
        + (f"; constant answer {constant:.0%} (<= {b.constant_max:.0%})" if donor else "")
        + f" over {len(pairs)} training tasks"
    )
    if problems:
        raise CheckFailed("; ".join(problems) + f" [{summary}]", metrics)
    return summary, metrics
