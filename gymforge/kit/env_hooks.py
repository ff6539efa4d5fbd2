"""The optional hooks of ``ToolEnv`` and their defaults, in one table.

``ToolEnv`` calls each of these at a fixed point of ``reset`` or ``step``; an environment
overrides the ones it needs (and ``init_world`` and ``verify``, which ``ToolEnv`` declares
abstract). They are how an environment extends the base: ``reset`` and ``step`` themselves
are never overridden. A hook typed ``MaybeAsync`` may be written ``def`` or ``async def``
(``gymforge.kit.hooks``).
"""

from __future__ import annotations

from gymforge.core.episode import EndReason
from gymforge.core.types import Action, Message, Task, ToolCall
from gymforge.core.verdict import Verdict
from gymforge.kit.hooks import MaybeAsync
from gymforge.tools.faults import NO_FAULTS, FaultPlan
from gymforge.tools.result import ToolResult


class ToolEnvHooks:
    """The hooks ``ToolEnv`` calls beyond ``init_world`` and ``verify``, with defaults that
    do nothing (no faults, no oracle, no dialogue, no extra reward)."""

    def fault_plan(self, task: Task) -> FaultPlan:
        """Faults for this task's tool calls. Default: none."""
        return NO_FAULTS

    def on_reply(self, text: str) -> MaybeAsync[list[Message] | None]:
        """A non-final reply's answer (a user simulator), or None to end and verify. Write it
        ``async def`` when the answer comes from another process (an LLM-driven user)."""
        return None

    def oracle_plan(self, task: Task) -> list[Action] | None:
        """The reference solution path for ``task``, or None if this env has no oracle."""
        return None

    def no_oracle_reason(self, task: Task) -> str:
        """Why the oracle cannot play ``task`` (``oracle_plan`` gave no plan), naming the fix:
        the one ``error:`` line of ``--policy oracle`` on it. Override to say which field of
        a dataset row holds the reference solution."""
        env_id = getattr(getattr(self, "spec", None), "id", type(self).__name__)
        return (
            f"{env_id} has no reference solution for task {task.task_id}, so --policy oracle "
            "cannot play it: run another --policy"
        )

    def on_reset(self, task: Task) -> MaybeAsync[None]:
        """Set up what the episode needs beyond its world (a user simulator, a remote
        session), after ``init_world`` and before the first observation is rendered. Write it
        ``async def`` when it waits on another process. Default: nothing."""

    def on_end(self) -> MaybeAsync[None]:
        """Release what ``on_reset`` set up, once the episode has ended (its last step's
        result is built). Default: nothing."""

    def extra_reward(self) -> dict[str, float]:
        """Reward components this step adds next to the reward function's (process credit,
        say), at the end of every step. Summed by name with ``shape``'s. Default: none."""
        return {}

    def potential(self) -> float | None:
        """The potential of the current state for potential-based shaping, or None (the
        default) for none. When it returns a number after ``reset``, every step of that
        episode gets ``shaping = shaping_gamma * phi(s') - phi(s)`` (``phi`` of a terminal
        state is 0), which cannot change the optimal policy (``gymforge.kit.shaping``)."""
        return None

    def succeeded(self, verdict: Verdict | None) -> bool:
        """Whether the episode that ended with ``verdict`` is a success. Default: the verdict
        passed. Override when success needs more than the verdict's ``passed``."""
        return bool(verdict and verdict.passed)

    def over_budget_verdict(self, task: Task, action: Action, tokens: int) -> Verdict | None:
        """The verdict on an action that overran the token budget (it is cut off, never
        executed; the episode is truncated either way). Default None: no verdict. A
        single-turn environment can return one so that every answer gets a verdict."""
        return None

    def on_tool_result(self, call: ToolCall, result: ToolResult) -> None:
        """Called once per tool call, right after it ran, failed or was faulted, and before
        the step can end or be judged (an ending tool's ``verify`` already sees what this
        recorded). Default: nothing. World environments append their action-log event."""

    def env_rule_end(self) -> EndReason | None:
        """Override to end the episode on a hard domain rule (returns ``"env_rule"``)."""
        return None
