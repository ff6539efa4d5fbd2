"""Tools from typed Python functions.

``@tool`` turns a typed function (or method) with a Google-style docstring into a ``Tool``:
an OpenAI-compatible JSON Schema built from the signature, argument validation through
pydantic (strict types, unknown arguments rejected), and a JSON-ready result built from the
return annotation. ``gymforge.tools.toolset.Toolset`` dispatches ``ToolCall`` actions to
them.

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
import linecache
import os
import re
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, create_model

from gymforge.core.errors import (
    ToolErrorKind,
    UserError,
)

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
