"""What a tool call returns to the agent: a typed success or a structured, recoverable error."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from gymforge.core.errors import ToolErrorKind
from gymforge.core.seeding import canonical_json


class ToolErrorInfo(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ToolErrorKind
    message: str
    retryable: bool = False


class ToolResult(BaseModel):
    """``ok`` with ``content``, or not ``ok`` with ``error`` (MCP's ``isError`` made typed).

    ``fault`` names the injected fault, if any; ``stale`` marks data served from an earlier
    call (``as_of_call`` is that call's index for this tool).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    tool: str
    ok: bool
    content: Any = None
    error: ToolErrorInfo | None = None
    fault: str | None = None
    stale: bool = False
    as_of_call: int | None = None

    def render(self) -> str:
        """The text the agent sees in the tool message (canonical JSON, stable across runs)."""
        if self.ok:
            body: dict[str, Any] = {"ok": True, "result": self.content}
            if self.stale:
                body["as_of_call"] = self.as_of_call
        else:
            assert self.error is not None
            body = {"ok": False, "error": self.error.model_dump()}
        return canonical_json(body)

    def as_reply(self) -> str:
        """The final reply a successful call of an episode-ending tool is judged as: a string
        result as it is, no result as ``""``, any other result as its canonical JSON."""
        if isinstance(self.content, str):
            return self.content
        return "" if self.content is None else canonical_json(self.content)
