"""Episode accounting: budgets, the malformed-output policy, and why an episode ended.

Semantics (the QA suite checks each):

- ``terminated``: the *task* ended — the agent finished (success or failure), broke a hard
  rule, or exhausted the malformed-output cap. The verifier's verdict decides success.
- ``truncated``: a *budget* ended the episode (steps or tokens) before the task did. A
  truncated episode is never a success and is never also terminated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

MalformedMode = Literal["end", "penalize", "recover"]


@dataclass(frozen=True)
class Budget:
    """Limits on one episode. ``max_tokens`` counts observation plus action tokens."""

    max_steps: int = 16
    max_tokens: int | None = None

    def __post_init__(self) -> None:
        if self.max_steps < 1:
            raise ValueError("Budget.max_steps must be >= 1")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError("Budget.max_tokens must be >= 1 or None")


@dataclass(frozen=True)
class MalformedPolicy:
    """What an unparseable action (``Invalid``) does.

    - ``end``: the episode terminates with the ``malformed`` penalty component.
    - ``penalize``: the ``malformed`` penalty is applied and the episode continues.
    - ``recover``: the agent sees a parse-error observation and no penalty is applied.

    In every mode, ``max_consecutive`` malformed actions in a row terminate the episode
    (reason ``malformed_cap``) so that a broken policy cannot burn a whole budget.
    """

    mode: MalformedMode = "recover"
    penalty: float = -0.1
    max_consecutive: int = 3


EndReason = Literal["verdict", "malformed", "malformed_cap", "max_steps", "max_tokens", "env_rule"]
TRUNCATION_REASONS: frozenset[str] = frozenset({"max_steps", "max_tokens"})


@dataclass
class EpisodeCounters:
    """Mutable per-episode counters. Reset with the episode; part of no observation."""

    steps: int = 0
    tokens: int = 0
    consecutive_malformed: int = 0
    invalid_calls: int = 0
    malformed: int = 0
    tool_errors: int = 0

    def budget_end(self, budget: Budget) -> EndReason | None:
        """The truncation reason if a budget is spent, checked after each step."""
        if budget.max_tokens is not None and self.tokens >= budget.max_tokens:
            return "max_tokens"
        if self.steps >= budget.max_steps:
            return "max_steps"
        return None
