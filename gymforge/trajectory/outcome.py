"""What a finished episode counts as: the one definition every rate in gymforge uses.

A written episode is one of three things:

- ``success``: the environment judged it solved;
- ``failure``: anything else once the agent has acted, **including a verifier error**: a
  judge that raised on what the agent wrote, read or left behind is that episode's
  failure, with reason ``verifier_error: <kind>`` (the exception's type). Whatever the
  agent can make the judge do must not take its episode out of the denominator, or a
  policy learns to crash the judge on the tasks it cannot solve;
- ``unscored``: a verifier error before the agent took a single action (no step after the
  reset). Nothing the agent did can have caused it, so it says nothing about the policy:
  it is left out of every rate and counted on its own.

Infrastructure failures (an environment or sandbox that fails to start an episode, a dead
policy server, a killed worker: ``InfraError``) never get here: the runner retries them and,
when the retries run out, writes nothing and exits 3 (``rollout.runner``).

``classify_outcome`` reads only the closing episode record (``success``,
``failure_reason``, ``steps``), which ``rollout.episode`` writes with
:func:`verifier_error_reason`, so a run's summary, ``eval.json``, calibration and the
reward-hacking scan all count from the same fields, and an older file whose reason is the
bare ``verifier_error`` is read the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

VERIFIER_ERROR = "verifier_error"
"""The verdict reason (and the failure reason's prefix) of a judge that raised."""

OutcomeKind = Literal["success", "failure", "unscored"]


@dataclass(frozen=True)
class EpisodeOutcome:
    """What one finished episode counts as (see the module docstring)."""

    kind: OutcomeKind
    reason: str | None
    """The failure reason (``None`` for a success); ``verifier_error: <kind>`` for a judge
    that raised."""
    verifier_error: bool

    @property
    def counted(self) -> bool:
        """Whether the episode is in the denominator of every rate."""
        return self.kind != "unscored"

    @property
    def success(self) -> bool:
        return self.kind == "success"


def is_verifier_error(reason: str | None) -> bool:
    """Whether a failure reason names a verifier error (``verifier_error`` or
    ``verifier_error: <kind>``)."""
    return reason is not None and (
        reason == VERIFIER_ERROR or reason.startswith(VERIFIER_ERROR + ":")
    )


def verifier_error_reason(info: Mapping[str, Any]) -> str | None:
    """The failure reason of an episode whose ending step has ``info``, when its verifier
    raised: ``verifier_error: <kind>``, the kind being the exception's type as the verdict's
    ``error`` fact gives it (``verifier_error`` when it does not). ``None`` otherwise.

    A verifier error is marked by ``info["verifier_error"]`` (``ToolEnv`` sets it) or by a
    verdict whose reason is ``verifier_error``."""
    verdict = info.get("verdict")
    verdict = verdict if isinstance(verdict, Mapping) else {}
    if not (info.get(VERIFIER_ERROR) or verdict.get("reason") == VERIFIER_ERROR):
        return None
    facts = verdict.get("facts")
    error = facts.get("error") if isinstance(facts, Mapping) else None
    kind = error.split(":", 1)[0].strip() if isinstance(error, str) else ""
    if not kind.isidentifier():
        return VERIFIER_ERROR
    return f"{VERIFIER_ERROR}: {kind}"


def classify_outcome(end: Mapping[str, Any]) -> EpisodeOutcome:
    """What the episode closed by the episode record ``end`` counts as."""
    reason = end.get("failure_reason")
    reason = reason if isinstance(reason, str) else None
    if end.get("success"):
        return EpisodeOutcome("success", None, False)
    if is_verifier_error(reason):
        acted = int(end.get("steps") or 0) > 0
        return EpisodeOutcome("failure" if acted else "unscored", reason, True)
    return EpisodeOutcome("failure", reason, False)


@dataclass(frozen=True)
class OutcomeCounts:
    """The tallies every report prints: counted episodes, their successes and verifier
    errors, and the unscored episodes beside them."""

    episodes: int = 0
    successes: int = 0
    verifier_errors: int = 0
    unscored: int = 0

    @property
    def success_rate(self) -> float | None:
        return self.successes / self.episodes if self.episodes else None

    @property
    def verifier_error_rate(self) -> float | None:
        return self.verifier_errors / self.episodes if self.episodes else None


def count_outcomes(outcomes: Iterable[EpisodeOutcome]) -> OutcomeCounts:
    episodes = successes = errors = unscored = 0
    for o in outcomes:
        if not o.counted:
            unscored += 1
            continue
        episodes += 1
        successes += o.success
        errors += o.verifier_error
    return OutcomeCounts(episodes, successes, errors, unscored)
