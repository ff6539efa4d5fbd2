"""Tools from typed Python functions.

``@tool`` turns a typed function (or method) with a Google-style docstring into a ``Tool``:
an OpenAI-compatible JSON Schema built from the signature, argument validation through
pydantic (strict types, unknown arguments rejected), and a JSON-ready result built from the
return annotation. ``Toolset`` dispatches ``ToolCall`` actions, applies the episode's
``FaultPlan`` and turns every failure into a ``ToolResult`` error: nothing escapes but an
``InfraError`` (the tool's backend is down: the runner retries the episode, never scores it).

    class Shop:
        @tool
        def find_item(self, name: str, limit: int = 5) -> list[Item]:
            '''Search the catalogue by name.

            Args:
                name: Part of the item name, case-insensitive.
                limit: Maximum number of items to return.
            '''
"""

from __future__ import annotations

import inspect
import json
import linecache
import os
import re
import time
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model

from gymforge.core.errors import (
    TOOL_ERROR_KINDS,
    InfraError,
    ToolError,
    ToolErrorKind,
    UserError,
)
from gymforge.core.seeding import canonical_json
from gymforge.core.types import ToolCall
from gymforge.tools.faults import NO_FAULTS, FaultKind, FaultPlan
from gymforge.tools.result import ToolErrorInfo, ToolResult

_ARG_LINE = re.compile(r"^\s{2,}(\w+)\s*(?:\([^)]*\))?:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into (description, {arg: description})."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    desc: list[str] = []
    args: dict[str, str] = {}
    section = "desc"
    current: str | None = None
    for line in lines:
        stripped = line.strip()
        if stripped in ("Args:", "Arguments:", "Parameters:"):
            section, current = "args", None
            continue
        if re.match(r"^(Returns|Raises|Yields|Examples?|Notes?):$", stripped):
            section = "other"
            continue
        if section == "desc":
            desc.append(line)
        elif section == "args":
            m = _ARG_LINE.match("  " + line if not line.startswith(" ") else line)
            if m and not line.startswith(" " * 8):
                current = m.group(1)
                args[current] = m.group(2).strip()
            elif current and stripped:
                args[current] = f"{args[current]} {stripped}".strip()
    description = " ".join(p.strip() for p in "\n".join(desc).strip().split("\n\n")[0].splitlines())
    return description, args


def _strip_titles(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _strip_titles(v) for k, v in schema.items() if k != "title"}
    if isinstance(schema, list):
        return [_strip_titles(v) for v in schema]
    return schema


def _empty_like(annotation: Any) -> Any:
    origin = getattr(annotation, "__origin__", annotation)
    if origin in (list, tuple, set, frozenset):
        return []
    if origin is dict:
        return {}
    if origin is str:
        return ""
    return None


class ToolDefinitionError(UserError, TypeError):
    """A ``@tool`` that cannot become a schema; the message names the file, line and fix."""


class ToolDocWarning(UserWarning):
    """A ``@tool`` argument its docstring does not describe: the schema lacks its meaning."""


def source_location(f: Callable[..., Any]) -> str:
    """``file.py:LINE`` of ``f``'s ``def`` line (past its decorators), the path relative to
    the working directory when inside it."""
    code = getattr(f, "__code__", None)
    if code is None:
        return str(getattr(f, "__qualname__", f))
    path, line = code.co_filename, code.co_firstlineno
    for n in range(line, line + 50):
        text = linecache.getline(path, n).lstrip()
        if text.startswith(("def ", "async def ")):
            line = n
            break
    try:
        rel = os.path.relpath(path)
        path = rel if not rel.startswith("..") else path
    except ValueError:
        pass
    return f"{path}:{line}"


def _hint_example(p: inspect.Parameter) -> str:
    if p.default is inspect.Parameter.empty or p.default is None:
        return f"{p.name}: str"
    return f"{p.name}: {type(p.default).__name__} = {p.default!r}"


@dataclass(frozen=True, eq=False)
class Tool:
    """A validated tool. ``fn`` is unbound; ``Toolset`` binds it to its owner."""

    name: str
    description: str
    args_model: type[BaseModel]
    returns: TypeAdapter[Any] | None
    return_annotation: Any
    fn: Callable[..., Any]
    writes: bool
    takes_self: bool
    error_effects: frozenset[str] = frozenset()
    """Error kinds after which the call may nonetheless have been applied (a timeout after
    the commit). Any other error result must leave the state unchanged (QA checks it)."""
    parameters: dict[str, Any] | None = None
    """The JSON Schema of the arguments when it comes from elsewhere (an MCP server's
    ``inputSchema``) rather than from ``args_model``."""
    ends_episode: bool = False
    """A successful call ends the episode and is judged like a final reply (``ToolEnv``);
    not part of the schema the agent sees, so say so in the tool's description."""

    @property
    def schema(self) -> dict[str, Any]:
        """The OpenAI ``tools=[...]`` entry for this tool, built once per tool (schema
        generation costs ~0.3 ms, and every environment instance offers its tools)."""
        cached = _SCHEMAS.get(self)
        if cached is None:
            if self.parameters is not None:
                params = self.parameters
            else:
                params = _strip_titles(self.args_model.model_json_schema())
                params.setdefault("properties", {})
                params["additionalProperties"] = False
            cached = _SCHEMAS[self] = {
                "type": "function",
                "function": {
                    "name": self.name,
                    "description": self.description,
                    "parameters": params,
                },
            }
        return cached


_SCHEMAS: weakref.WeakKeyDictionary[Tool, dict[str, Any]] = weakref.WeakKeyDictionary()


_F = TypeVar("_F", bound=Callable[..., Any])


@overload
def tool(fn: _F) -> _F: ...


@overload
def tool(
    fn: None = None,
    *,
    name: str | None = None,
    writes: bool = False,
    error_effects: tuple[ToolErrorKind, ...] = (),
    ends_episode: bool = False,
) -> Callable[[_F], _F]: ...


def tool(
    fn: _F | None = None,
    *,
    name: str | None = None,
    writes: bool = False,
    error_effects: tuple[ToolErrorKind, ...] = (),
    ends_episode: bool = False,
) -> _F | Callable[[_F], _F]:
    """Decorate a typed function as a tool (``@tool`` or ``@tool(...)``); the function is
    returned unchanged, with its ``Tool`` attached. ``writes=True`` marks tools that change
    state; ``error_effects`` names the error kinds that may leave the call applied (a wrapper
    such as ``world_write`` declares its own in ``__gymforge_error_effects__``);
    ``ends_episode=True`` makes a successful call the episode's last step, judged like a
    final reply (see ``ToolEnv``: a failed or faulted call does not end it)."""

    def wrap(f: _F) -> _F:
        here = f"{source_location(f)}: tool {f.__name__}"
        sig = inspect.signature(f)
        try:
            hints = get_type_hints(f)
        except NameError as err:
            raise ToolDefinitionError(
                f"{here}: a type hint names something undefined ({err}); import it in the module"
            ) from None
        description, arg_docs = parse_docstring(f.__doc__)
        fields: dict[str, Any] = {}
        params = list(sig.parameters.values())
        takes_self = bool(params) and params[0].name == "self"
        for p in params[1:] if takes_self else params:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise ToolDefinitionError(
                    f"{here}: *args/**kwargs are not supported; name each argument with a type hint"
                )
            if p.name not in hints:
                raise ToolDefinitionError(
                    f"{here}: parameter {p.name!r} needs a type hint "
                    f"(the schema is built from it), e.g. `{_hint_example(p)}`"
                )
            if p.name not in arg_docs:
                warnings.warn(
                    f"{here}: argument {p.name!r} is not described in "
                    f"its docstring, so the schema tells the model nothing about it; add "
                    f"`{p.name}: what it means` under `Args:`",
                    ToolDocWarning,
                    stacklevel=2,
                )
            default = ... if p.default is inspect.Parameter.empty else p.default
            fields[p.name] = (hints[p.name], Field(default, description=arg_docs.get(p.name)))
        model = create_model(
            f"{f.__name__}_args", __config__=ConfigDict(extra="forbid", strict=True), **fields
        )
        ret = hints.get("return", Any)
        f.__gymforge_tool__ = Tool(  # type: ignore[attr-defined]
            name=name or f.__name__,
            description=description or f.__name__,
            args_model=model,
            returns=None if ret in (None, type(None)) else TypeAdapter(ret),
            return_annotation=ret,
            fn=f,
            writes=writes,
            takes_self=takes_self,
            error_effects=frozenset(error_effects)
            | frozenset(getattr(f, "__gymforge_error_effects__", ())),
            ends_episode=ends_episode,
        )
        return f

    return wrap(fn) if fn is not None else wrap


def tools_of(owner: Any) -> list[Tool]:
    """Every ``@tool`` on ``owner``'s class (or in a module/list), in definition order."""
    found: dict[str, Tool] = {}
    for klass in reversed(type(owner).__mro__):
        for attr in vars(klass).values():
            t = getattr(attr, "__gymforge_tool__", None)
            if isinstance(t, Tool):
                found[t.name] = t
    return list(found.values())


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
