"""The shell capability: which tool of an environment runs a shell command in its workspace.

A workspace harness (``--harness-mode workspace``, :mod:`gymforge.serve.harness`) gets a
shell, not the environment's tools: each command it sends becomes one ``ToolCall`` of the
environment's shell tool, executed by the environment in its own sandbox or container with
the timeout and output cap that tool enforces. An environment says which tool that is by
declaring ``shell_tool`` (a :class:`ShellTool`); one that does not refuses workspace mode.

The shell tool's result (its ``ToolResult.content``) is read by :meth:`ShellTool.outcome`:
a mapping with ``exit_code`` and the output as ``stdout``/``stderr`` or one ``output``;
``timed_out`` or a non-empty ``limits_hit`` mark a command stopped by its limits. Anything
the command printed stays output: no field of the output is ever read as anything else.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from gymforge.core.capabilities import Capability

LIMIT_EXIT = 124
"""The exit code of a command its limits stopped (the timeout convention of ``timeout(1)``)."""
REFUSED_EXIT = 126
"""The exit code of a command the tool refused (bad arguments, an injected fault...)."""

Briefing = Callable[[str], tuple[tuple[str, dict[str, Any]], ...]]
"""From the reset prompt's text, the tool calls whose results complete a workspace harness's
instruction (what only a non-shell tool can show, e.g. the issue an ``swe`` task names)."""


@dataclass(frozen=True)
class ShellOutcome:
    """What a shell command gave the harness: its output and exit code."""

    stdout: str
    stderr: str
    exit_code: int

    def as_json(self) -> dict[str, Any]:
        return {"stdout": self.stdout, "stderr": self.stderr, "exit_code": self.exit_code}


@dataclass(frozen=True)
class ShellTool:
    """An environment's shell tool: its ``name``, the ``argument`` that takes the command
    line, and ``via_sh`` when that tool splits its argument into words itself (then the
    command is passed as ``sh -c COMMAND``, so pipes and redirections work).
    ``briefing``: see :data:`Briefing`."""

    name: str
    argument: str = "command"
    via_sh: bool = False
    briefing: Briefing | None = None

    def arguments(self, command: str) -> dict[str, Any]:
        """The tool call's arguments for one shell command."""
        line = shlex.join(["sh", "-c", command]) if self.via_sh else command
        return {self.argument: line}

    def outcome(self, tool_result: Mapping[str, Any] | None) -> ShellOutcome:
        """The command's outcome from the step's ``tool_result`` (module docstring)."""
        if not isinstance(tool_result, Mapping):
            return ShellOutcome("", "gymforge: the step gave no tool result\n", REFUSED_EXIT)
        if not tool_result.get("ok"):
            error = tool_result.get("error") or {}
            kind = error.get("kind", "error") if isinstance(error, Mapping) else "error"
            message = error.get("message", "") if isinstance(error, Mapping) else str(error)
            return ShellOutcome("", f"gymforge: {kind}: {message}\n", REFUSED_EXIT)
        content = tool_result.get("content")
        if not isinstance(content, Mapping):
            return ShellOutcome(_text(content), "", 0)
        stdout = _text(content.get("stdout", content.get("output", "")))
        stderr = _text(content.get("stderr", ""))
        limits = content.get("limits_hit") or []
        stopped = bool(content.get("timed_out")) or bool(limits)
        code = content.get("exit_code")
        notes = [str(content["note"])] if content.get("note") else []
        if stopped:
            notes.append("the command was stopped by its limits" + _named(limits))
        if content.get("output_truncated"):
            notes.append("the output was cut at the tool's cap")
        stderr += "".join(f"gymforge: {n}\n" for n in notes)
        if stopped:
            code = LIMIT_EXIT
        elif isinstance(code, bool) or not isinstance(code, int):
            code = REFUSED_EXIT
        return ShellOutcome(stdout, stderr, code)


class HasShellTool(Protocol):
    """An environment with a shell tool (module docstring)."""

    @property
    def shell_tool(self) -> ShellTool: ...


SHELL: Capability[HasShellTool] = Capability("shell_tool", HasShellTool, "shell tool")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def _named(limits: Any) -> str:
    names = [str(n) for n in limits] if isinstance(limits, list) else []
    return f" ({', '.join(names)})" if names else ""
