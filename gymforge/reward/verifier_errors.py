"""Is a policy making the judge raise? Its verifier-error rate against the scripted baselines'.

A verifier error after the agent acted is a failed episode (``trajectory.outcome``), so
crashing the judge no longer pays. It is still a signal worth a look: a policy that learned
to break the judge, or a judge that breaks on ordinary answers (an environment bug). What
separates the two is the baselines: the oracle, noop and random policies on the same tasks
show the rate the environment has without any cleverness.

The comparison is a one-sided Fisher exact test of the run's ``errors / episodes`` against
each baseline's: the run is flagged when its rate is higher than every baseline's and the
test's p-value is below ``alpha`` against each of them (the largest p-value decides). Exact
for small runs, no normal approximation. With no baseline given, the reference is 0: every
verifier error is flagged, and the finding says so.

Baselines must be runs of the same environment id and version (anything else compares two
different judges: a ``UserError``) and should cover the same task sample: runs the user names
(``--baseline``, made with the same ``-n``, ``--seed`` and ``--split``), or the scripted
policies played on the run's own ``(task, seed)`` pairs (``--play-baselines``,
``evaluate.baselines``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from gymforge.core.errors import UserError
from gymforge.trajectory.io import EpisodeLog, read_episodes, verify_chain
from gymforge.trajectory.outcome import classify_outcome, count_outcomes

DEFAULT_ALPHA = 0.05


@dataclass(frozen=True)
class ErrorRate:
    """A run's verifier errors among its counted episodes."""

    label: str
    env: str
    errors: int
    episodes: int

    @property
    def rate(self) -> float:
        return self.errors / self.episodes if self.episodes else 0.0

    def text(self) -> str:
        return f"{self.label} {self.rate:.0%} ({self.errors}/{self.episodes})"


def error_rate(logs: Iterable[EpisodeLog], label: str | None = None) -> ErrorRate:
    """The rate over the finished episodes of ``logs`` (as ``classify_outcome`` counts them);
    ``label`` defaults to the policy checkpoints the episodes name."""
    ends = [log.end for log in logs if log.end is not None]
    counts = count_outcomes(classify_outcome(e.model_dump()) for e in ends)
    envs = sorted({f"{e.env_id}@{e.env_version}" for e in ends})
    if len(envs) > 1:
        raise UserError(f"one run holds episodes of several environments: {', '.join(envs)}")
    name = label or "/".join(sorted({e.policy_checkpoint for e in ends})) or "?"
    return ErrorRate(name, envs[0] if envs else "?", counts.verifier_errors, counts.episodes)


def baseline_rate(path: Path, label: str | None = None) -> ErrorRate:
    """The rate of the baseline run in ``path`` (a trajectory file, digest chains checked)."""
    logs = [log for log in read_episodes(path) if log.end is not None]
    for log in logs:
        verify_chain(log)
    if not logs:
        raise UserError(f"baseline {path} holds no finished episode")
    return error_rate(logs, label)


def fisher_greater(x: int, n: int, y: int, m: int) -> float:
    """One-sided Fisher exact p-value that ``x / n`` exceeds ``y / m`` by chance:
    ``P(X >= x)`` for ``X`` hypergeometric (``n + m`` episodes, ``x + y`` errors, ``n``
    drawn)."""
    total, errors = n + m, x + y
    if n == 0 or m == 0 or x == 0:
        return 1.0

    def log_comb(a: int, b: int) -> float:
        return math.lgamma(a + 1) - math.lgamma(b + 1) - math.lgamma(a - b + 1)

    base = log_comb(total, n)
    top = min(n, errors)
    p = math.fsum(
        math.exp(log_comb(errors, k) + log_comb(total - errors, n - k) - base)
        for k in range(x, top + 1)
        if n - k <= total - errors
    )
    return min(1.0, p)


def excess_errors(
    run: ErrorRate, baselines: Sequence[ErrorRate], alpha: float = DEFAULT_ALPHA
) -> str | None:
    """The finding's detail when ``run``'s verifier-error rate exceeds the baselines' (see
    the module docstring), else None. UserError for a baseline of another environment."""
    for b in baselines:
        if b.env != run.env:
            raise UserError(
                f"baseline {b.label} is a run of {b.env}, not {run.env}: its verifier errors "
                "say nothing about this judge"
            )
    if run.errors == 0:
        return None
    if not baselines:
        return (
            f"{run.text()} of episodes ended in a verifier error, counted as failures; no "
            "baseline given, so the reference is 0 (pass --baseline with oracle/noop/random "
            "runs of the same tasks to compare)"
        )
    if any(b.rate >= run.rate for b in baselines):
        return None
    p = max(fisher_greater(run.errors, run.episodes, b.errors, b.episodes) for b in baselines)
    if p >= alpha:
        return None
    others = ", ".join(b.text() for b in baselines)
    return (
        f"{run.text()} of episodes ended in a verifier error, above the baselines "
        f"({others}; one-sided Fisher p={p:.2g}): the policy may be making the judge raise"
    )
