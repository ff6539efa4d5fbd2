"""``Toolset``: dispatch ``ToolCall`` actions to ``Tool``s (``gymforge.tools.tool``).

Arguments are validated against the tool's model, the episode's ``FaultPlan`` is applied,
the call runs, and its return value is dumped as JSON; every failure becomes a
``ToolResult`` error. Nothing escapes but an ``InfraError`` (the tool's backend is down: the
runner retries the episode, never scores it).
"""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from gymforge.core.errors import (
    TOOL_ERROR_KINDS,
    InfraError,
    ToolError,
)
from gymforge.core.seeding import canonical_json
from gymforge.core.types import ToolCall
from gymforge.tools.faults import NO_FAULTS, FaultKind, FaultPlan
from gymforge.tools.result import ToolErrorInfo, ToolResult
from gymforge.tools.tool import Tool, tools_of


def _empty_like(annotation: Any) -> Any:
    origin = getattr(annotation, "__origin__", annotation)
    if origin in (list, tuple, set, frozenset):
        return []
    if origin is dict:
        return {}
    if origin is str:
        return ""
    return None


def _validate_args(model: type[BaseModel], arguments: dict[str, Any]) -> BaseModel:
    """The arguments as the JSON they are. Strict validation of the Python objects is the
    fast path; what it refuses is tried once more as JSON, where an enum's value, an array for
    a tuple or an ISO date string is what the schema asked for. A call both refuse reports
    the first refusal (the messages authors and recorded runs know)."""
    try:
        return model.model_validate(arguments)
    except ValidationError as err:
        try:
            return model.model_validate_json(json.dumps(arguments))
        except ValidationError:
            raise err from None


def _error(
    tool_name: str, kind: Any, message: str, *, retryable: bool = False, fault: str | None = None
) -> ToolResult:
    return ToolResult(
        tool=tool_name,
        ok=False,
        fault=fault,
        error=ToolErrorInfo(kind=kind, message=message, retryable=retryable),
    )


def _failure(tool_name: str, err: Exception) -> ToolResult:
    """A tool that raised: ``ToolError`` keeps its kind; anything else is the tool's bug, never
    the agent's."""
    if isinstance(err, ToolError):
        kind = err.kind if err.kind in TOOL_ERROR_KINDS else "internal"
        return _error(tool_name, kind, str(err.message)[:2000], retryable=bool(err.retryable))
    return _error(tool_name, "internal", f"tool crashed: {type(err).__name__}")


def _validation_message(err: ValidationError) -> str:
    parts = []
    for e in err.errors()[:5]:
        loc = ".".join(str(x) for x in e["loc"]) or "arguments"
        parts.append(f"{loc}: {e['msg']}")
    return "; ".join(parts)


@dataclass(frozen=True)
class _Pending:
    """A validated call about to run: its tool, history key, per-tool index and thunk."""

    tool: Tool
    key: tuple[str, str]
    index: int
    invoke: Callable[[], Any]


class Toolset:
    """The tools of one owner (usually an environment), with per-episode call accounting."""

    def __init__(self, owner: Any, tools: list[Tool] | None = None) -> None:
        self.owner = owner
        self.tools = {t.name: t for t in (tools if tools is not None else tools_of(owner))}
        self._plan: FaultPlan = NO_FAULTS
        self._task_id = ""
        self._seed = 0
        self._calls: dict[str, int] = {}
        self._history: dict[tuple[str, str], tuple[int, Any]] = {}
        self.last_result: ToolResult | None = None

    @property
    def schemas(self) -> tuple[dict[str, Any], ...]:
        """The OpenAI tool schemas of this set (each built once per tool)."""
        return tuple(t.schema for t in self.tools.values())

    def reset(self, task_id: str, seed: int, plan: FaultPlan = NO_FAULTS) -> None:
        """Start a new episode: call counters and the stale-data history are cleared."""
        self._plan, self._task_id, self._seed = plan, task_id, seed
        self._calls = {}
        self._history = {}
        self.last_result = None

    def set_fault_plan(self, plan: FaultPlan) -> None:
        """Replace this episode's fault plan (QA uses it to force faults on every tool)."""
        self._plan = plan

    def call(self, action: ToolCall) -> tuple[ToolResult, float]:
        """Run one call. Returns the result and its latency in ms (for ``timing`` only).
        An ``async def`` tool cannot run here (use ``acall``): it gets an ``internal`` error."""
        t0 = time.perf_counter()
        p = self._prepare(action)
        result = p if isinstance(p, ToolResult) else self._finish(p, p.invoke, sync=True)
        return self._record(result, t0)

    async def acall(self, action: ToolCall) -> tuple[ToolResult, float]:
        """``call`` for event loops: ``async def`` tools are awaited, so a tool that waits on
        another process (a sandbox, a service) lets other episodes run meanwhile."""
        t0 = time.perf_counter()
        p = self._prepare(action)
        if isinstance(p, ToolResult):
            return self._record(p, t0)
        try:
            value = p.invoke()
            if inspect.isawaitable(value):
                value = await value
        except InfraError:  # the tool's backend failed: the episode is retried, never scored
            raise
        except Exception as err:
            return self._record(_failure(p.tool.name, err), t0)
        return self._record(self._finish(p, lambda: value, sync=False), t0)

    def _record(self, result: ToolResult, t0: float) -> tuple[ToolResult, float]:
        self.last_result = result
        return result, (time.perf_counter() - t0) * 1e3

    def _prepare(self, action: ToolCall) -> ToolResult | _Pending:
        """Validate and account for one call: an error or fault result, or what to invoke."""
        t = self.tools.get(action.name)
        if t is None:
            known = ", ".join(sorted(self.tools)) or "none"
            return _error(
                action.name[:200],
                "unknown_tool",
                f"no tool named {action.name[:200]!r}; available: {known}",
            )
        try:
            args = _validate_args(t.args_model, action.arguments)
        except ValidationError as err:
            return _error(t.name, "invalid_arguments", _validation_message(err))
        index = self._calls.get(t.name, 0)
        self._calls[t.name] = index + 1
        fault = self._plan.decide(self._task_id, self._seed, t.name, index)
        key = (t.name, canonical_json(args.model_dump(mode="json")))
        if fault is not None:
            faulted = self._apply_fault(t, fault, key)
            if faulted is not None:
                return faulted
        kwargs = {name: getattr(args, name) for name in type(args).model_fields}
        owner = self.owner

        def invoke() -> Any:
            return t.fn(owner, **kwargs) if t.takes_self else t.fn(**kwargs)

        return _Pending(t, key, index, invoke)

    def _finish(self, p: _Pending, invoke: Callable[[], Any], *, sync: bool) -> ToolResult:
        try:
            value = invoke()
            if sync and inspect.isawaitable(value):
                if inspect.iscoroutine(value):
                    value.close()
                return _error(p.tool.name, "internal", "async tool called synchronously; use acall")
            content = p.tool.returns.dump_python(value, mode="json") if p.tool.returns else None
        except InfraError:
            raise
        except Exception as err:
            return _failure(p.tool.name, err)
        if not p.tool.writes:
            self._history.setdefault(p.key, (p.index, content))
        return ToolResult(tool=p.tool.name, ok=True, content=content)

    def _apply_fault(self, t: Tool, fault: FaultKind, key: tuple[str, str]) -> ToolResult | None:
        if fault == "timeout":
            return _error(
                t.name,
                "timeout",
                "the tool timed out; the call was not applied",
                retryable=True,
                fault=fault,
            )
        if fault == "permission_denied":
            return _error(
                t.name, "permission_denied", "permission denied for this call", fault=fault
            )
        if fault == "empty" and not t.writes:
            return ToolResult(
                tool=t.name, ok=True, content=_empty_like(t.return_annotation), fault=fault
            )
        earlier = self._history.get(key)
        if t.writes or earlier is None:
            return None
        return ToolResult(
            tool=t.name, ok=True, content=earlier[1], fault=fault, stale=True, as_of_call=earlier[0]
        )
