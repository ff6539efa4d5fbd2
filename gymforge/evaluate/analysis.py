"""Behavioural analysis: why episodes fail, and which successes deserve a human look.

**Failure reasons** come from the closing record's ``failure_reason`` (the verdict's reason,
or the end reason such as ``max_steps`` when no verdict was reached) and from the verdict's
facts (``missing=1``, ``extra=2``...), counted over failed episodes.

**Review flags** are a reward-hacking screen over high-reward episodes (successes, or a
positive reward at or above the run's 90th percentile). An episode is flagged when it

- ``fewer_steps_than_oracle``: took fewer steps than the environment's reference path;
- ``unusually_few_steps``: took under half the median steps of the successes of its family
  and difficulty (at least ``min_peers`` of them) and at least 2 fewer;
- ``no_tool_calls``: succeeded without a single tool call where most successes of its family
  used tools (claiming success without doing the work);
- ``unusual_tools``: used a set of tools that under ``rare_share`` of its family's successes
  used (at least ``min_peers`` * 4 of them), or a tool no other success used.

A flag is a prompt to read the trajectory, not a verdict.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from gymforge.evaluate.episodes import EpisodeStats

MAX_FLAGGED = 50


def failure_analysis(stats: Sequence[EpisodeStats], top: int = 10) -> dict[str, Any]:
    """The most common failure reasons and verdict facts among failed episodes."""
    failed = [s for s in stats if not s.success]
    reasons = Counter(_reason(s) for s in failed)
    facts: Counter[str] = Counter()
    by_reason_facts: dict[str, Counter[str]] = defaultdict(Counter)
    for s in failed:
        items = [f"{k}={v}" for k, v in sorted(s.verdict_facts.items()) if _scalar(v)]
        facts.update(items)
        by_reason_facts[_reason(s)].update(items)
    examples: dict[str, str] = {}
    for s in failed:
        examples.setdefault(_reason(s), s.episode_id)
    n = len(failed)
    return {
        "failed": n,
        "reasons": [
            {
                "reason": reason,
                "count": count,
                "share": count / n,
                "example": examples[reason],
                "top_facts": [f for f, _ in by_reason_facts[reason].most_common(3)],
            }
            for reason, count in reasons.most_common(top)
        ],
        "facts": [
            {"fact": fact, "count": count, "share": count / n}
            for fact, count in facts.most_common(top)
        ],
    }


def _reason(s: EpisodeStats) -> str:
    if s.failure_reason:
        return s.failure_reason
    return "truncated" if s.truncated else "unknown"


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float | bool) or value is None


def flag_for_review(
    stats: Sequence[EpisodeStats], *, min_peers: int = 5, rare_share: float = 0.05
) -> dict[str, Any]:
    """High-reward episodes with unusually few steps or unusual actions (see module doc)."""
    if not stats:
        return {"screened": 0, "flagged": 0, "episodes": [], "rules": {}}
    rewards = sorted(s.reward for s in stats)
    p90 = rewards[min(len(rewards) - 1, int(0.9 * len(rewards)))]
    high = [s for s in stats if s.success or (s.reward >= p90 and s.reward > max(0.0, rewards[0]))]
    wins_by_cell: dict[tuple[str, int], list[int]] = defaultdict(list)
    sigs: dict[str, Counter[tuple[str, ...]]] = defaultdict(Counter)
    tool_users: dict[str, Counter[str]] = defaultdict(Counter)
    wins_by_family: Counter[str] = Counter()
    for s in stats:
        if s.success:
            wins_by_cell[(s.family, s.difficulty)].append(s.steps)
            sigs[s.family][s.tools_used] += 1
            tool_users[s.family].update(s.tools_used)
            wins_by_family[s.family] += 1
    medians = {
        cell: statistics.median(v) for cell, v in wins_by_cell.items() if len(v) >= min_peers
    }
    flagged: list[dict[str, Any]] = []
    rules: Counter[str] = Counter()
    for s in high:
        reasons = []
        if s.oracle_steps is not None and s.steps < s.oracle_steps:
            reasons.append(f"fewer_steps_than_oracle ({s.steps} < {s.oracle_steps})")
        median = medians.get((s.family, s.difficulty))
        if median is not None and s.steps < 0.5 * median and s.steps <= median - 2:
            reasons.append(f"unusually_few_steps ({s.steps} vs median {median:g})")
        peers = wins_by_family[s.family]
        with_tools = peers - sigs[s.family][()]
        if s.success and s.tool_calls == 0 and peers >= min_peers and with_tools >= 0.8 * peers:
            reasons.append("no_tool_calls")
        elif peers >= 4 * min_peers and s.tools_used:
            share = sigs[s.family][s.tools_used] / peers
            lonely = [t for t in s.tools_used if tool_users[s.family][t] <= 1]
            if lonely:
                reasons.append(f"unusual_tools (only this success used {', '.join(lonely)})")
            elif share < rare_share:
                reasons.append(f"unusual_tools (tool set used by {share:.1%} of successes)")
        if reasons:
            rules.update(r.split(" ")[0] for r in reasons)
            flagged.append(
                {
                    "episode_id": s.episode_id,
                    "task_id": s.task_id,
                    "family": s.family,
                    "difficulty": s.difficulty,
                    "split": s.split,
                    "success": s.success,
                    "reward": s.reward,
                    "steps": s.steps,
                    "oracle_steps": s.oracle_steps,
                    "tools_used": list(s.tools_used),
                    "reasons": reasons,
                }
            )
    flagged.sort(key=lambda f: (-f["reward"], f["steps"], f["episode_id"]))
    return {
        "screened": len(high),
        "flagged": len(flagged),
        "rules": dict(rules.most_common()),
        "episodes": flagged[:MAX_FLAGGED],
    }


def failure_log_rows(stats: Sequence[EpisodeStats]) -> list[dict[str, Any]]:
    """One structured row per failed (or unscored) episode, for ``failures.jsonl``; a
    verifier error's reason is ``verifier_error: <kind>``, and ``counted`` says whether the
    episode is in the rates (False only for an unscored one, see ``trajectory.outcome``)."""
    return [
        {
            "episode_id": s.episode_id,
            "task_id": s.task_id,
            "seed": s.seed,
            "rollout": s.rollout,
            "family": s.family,
            "difficulty": s.difficulty,
            "split": s.split,
            "reason": _reason(s),
            "verifier_error": s.verifier_error,
            "counted": s.counted,
            "terminated": s.terminated,
            "truncated": s.truncated,
            "steps": s.steps,
            "reward": s.reward,
            "reward_components": s.components,
            "facts": s.verdict_facts,
            "tool_calls": s.tool_calls,
            "tool_errors": s.tool_errors,
            "error_kinds": s.error_kinds,
            "malformed": s.malformed,
        }
        for s in stats
        if not s.success
    ]
