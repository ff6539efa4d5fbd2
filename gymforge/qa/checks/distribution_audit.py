"""distribution_audit: what the environment generates matches what it declares.

Over a large sample of training task ids: the duplicate rate (distinct ids with the same
prompt and hidden truth) stays under ``QAProfile.max_duplicate_rate``; each family's share is within
``family_share_tolerance`` of its declared weight (uniform when none is declared); every
declared difficulty level of every family is generated, and a family's levels, built from
one shared random stream, do not all build the same task (a level whose params the family
ignores changes nothing a curriculum can schedule). With ``--policy``, per-family
success on training tasks must sit inside ``QAProfile.success_band`` (not ~0%, not ~100%).

What it cannot catch: tasks that are distinct but ambiguous, unsolvable or trivially
similar; and, without ``--policy``, whether levels that build different tasks differ in
difficulty.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from gymforge.core.errors import UnknownTaskError
from gymforge.core.seeding import canonical_json, derive_seed, seeded, stable_hash
from gymforge.qa.checks.common import (
    CheckFailed,
    QAOptions,
    jobs,
    need_tasks,
    play_many,
    run_async,
)
from gymforge.qa.target import QATarget
from gymforge.tasks.truth_dump import dump_truth

NAME = "distribution_audit"


def _trainable(tasks: Any, family: str, level: int, seed: int) -> bool:
    try:
        return bool(tasks.sample(1, seed, "train", [level], [family]))
    except UnknownTaskError:  # every task at this level is held out
        return False


FLAT_PROBES = 4
"""Shared streams each family's levels are built from; one that differs clears it."""


def flat_levels(family: Any, seed: int) -> bool:
    """Whether every difficulty level of ``family`` (two or more) builds the same prompt and
    truth from the same random stream, on each of ``FLAT_PROBES`` streams: the params that
    tell the levels apart change nothing the family builds."""
    levels = sorted(family.levels)
    if len(levels) < 2:
        return False
    for probe in range(FLAT_PROBES):
        stream = derive_seed("qa-flat-levels", family.name, seed, probe)
        built = set()
        for level in levels:
            try:
                prompt, truth = family.build(family.params_for(level, probe), seeded(stream))
            except Exception:  # a family that builds only through its own ``task`` (a
                return False  # dataset's rows): its levels cannot be compared this way
            built.add(stable_hash(prompt, canonical_json(dump_truth(truth))))
        if len(built) > 1:
            return False
    return True


def run(target: QATarget, opts: QAOptions) -> tuple[str, dict[str, Any]]:
    tasks = need_tasks(target)
    profile = target.profile
    n = max(200, opts.episodes * 10)
    ids = tasks.sample(n, opts.seed + 6, "train")
    resolved = [tasks.resolve(task_id) for task_id in ids]
    # a duplicate is two task ids with one prompt and truth: a finite dataset, sampled with
    # replacement, draws the same row twice, and that is not a duplicate task
    distinct = {t.task_id: t for t in resolved}.values()
    digests = Counter(stable_hash(t.prompt, canonical_json(t.truth)) for t in distinct)
    dup_rate = 1 - len(digests) / len(distinct)
    shares = Counter(t.family for t in resolved)
    weights = dict(profile.family_weights or {f: 1.0 for f in tasks.families})
    total_w = sum(weights.values())
    histogram = {
        f: dict(sorted(Counter(t.difficulty for t in resolved if t.family == f).items()))
        for f in sorted(tasks.families)
    }
    metrics: dict[str, Any] = {
        "sampled": n,
        "duplicate_rate": round(dup_rate, 4),
        "family_share": {f: shares[f] / n for f in sorted(tasks.families)},
        "difficulty_histogram": histogram,
    }
    problems = []
    if dup_rate > profile.max_duplicate_rate:
        problems.append(f"duplicate rate {dup_rate:.1%} > {profile.max_duplicate_rate:.1%}")
    for family, w in weights.items():
        share, want = shares[family] / n, w / total_w
        if abs(share - want) > profile.family_share_tolerance:
            problems.append(f"{family} share {share:.1%}, declared {want:.1%}")
    for family, fam in tasks.families.items():
        missing = sorted(set(fam.levels) - set(histogram[family]))
        trainable = [d for d in missing if _trainable(tasks, family, d, opts.seed)]
        if trainable:
            problems.append(f"{family} never sampled trainable difficulty levels {trainable}")
    flat = sorted(name for name, fam in tasks.families.items() if flat_levels(fam, opts.seed))
    metrics["flat_levels"] = flat
    for family in flat:
        problems.append(
            f"{family} builds the same task at difficulty levels "
            f"{sorted(tasks.families[family].levels)} from the same random stream: its build "
            "ignores the params that tell the levels apart"
        )
    if opts.policy:
        lo, hi = profile.success_band
        pairs = jobs(target, max(20, opts.episodes), opts.seed + 7, "train")
        episodes = run_async(play_many(target, opts.policy, pairs))
        per: dict[str, list[bool]] = {}
        for e, (task_id, _) in zip(episodes, pairs, strict=True):
            per.setdefault(tasks.resolve(task_id).family, []).append(e[-1]["success"])
        rates = {f: sum(v) / len(v) for f, v in per.items()}
        metrics["policy_success"] = rates
        for f, rate in rates.items():
            if not lo <= rate <= hi:
                problems.append(
                    f"{opts.policy} succeeds {rate:.0%} on {f}, outside "
                    f"[{lo:.0%}, {hi:.0%}]: no learning signal"
                )
    if problems:
        raise CheckFailed("; ".join(problems), metrics)
    levels = sum(len(h) for h in histogram.values())
    return (
        f"{n} tasks: {dup_rate:.1%} duplicates, {len(shares)} families within "
        f"{profile.family_share_tolerance:.0%} of declared shares, {levels} difficulty "
        "levels present",
        metrics,
    )
