"""Walking an environment's ``oracle_plan`` one action at a time, adapting to faults.

``ToolEnv.oracle_action`` is the one ``oracle_action`` of every kit environment: it asks
:class:`OracleWalk` for the next action of the plan its ``oracle_plan`` gave for the
current task. A tool call that hit a fault or a retryable error is sent again; once the plan
is used up, its last action repeats (in a dialogue the episode can outlive the plan: an
attack that skipped a step leaves the customer talking).
"""

from __future__ import annotations

from collections.abc import Sequence

from gymforge.core.types import Action, ToolCall
from gymforge.tools.result import ToolResult


class OracleWalk:
    """The position in one episode's reference plan."""

    def __init__(self, plan: Sequence[Action]) -> None:
        self.plan = list(plan)
        self.i = 0

    def next(self, last: ToolResult | None) -> Action:
        """The next action, given the result of the last tool call (None before any)."""
        plan, i = self.plan, min(self.i, len(self.plan))
        if (
            i > 0
            and isinstance(plan[i - 1], ToolCall)
            and last is not None
            and (last.fault or (last.error is not None and last.error.retryable))
        ):
            i -= 1  # the call failed in a way worth retrying: send it again
        self.i = i + 1
        return plan[min(i, len(plan) - 1)]
