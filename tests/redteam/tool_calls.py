"""A scripted policy's tool call on a ``SyncEnvironment``, as a patient agent makes it:
faults and retryable errors are retried with the same arguments (and so the same
idempotency key)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gymforge.core import StepResult, SyncEnvironment, ToolCall


def call_retrying(
    env: SyncEnvironment,
    name: str,
    args: dict[str, Any],
    seen: Callable[[StepResult], None] | None = None,
    tries: int = 6,
) -> Any:
    """The content of ``name(**args)``'s first clean answer, or None once it is refused for
    good or ``tries`` attempts failed; ``seen`` is given every step's result."""
    for _ in range(tries):
        result = env.step(ToolCall(name=name, arguments=args))
        if seen is not None:
            seen(result)
        answer = result.info["tool_result"]
        if answer["ok"] and not answer["fault"]:
            return answer["content"]
        if not (answer["error"] or {}).get("retryable", True):
            return None
    return None
