"""What the proxy records of one episode: every model request, in arrival order.

A :class:`ProxyTurn` is one chat request and its response: the messages and tools as the
harness sent them, the assistant message it got back, and the exact token ids and logprobs
(when the server returned them), the finish reason, model and weight version, and how the
request was served: ``token-in`` (the proxy continued the previous turn's token sequence)
or ``pass-through`` (forwarded as sent).

Turns form *branches*: a request whose messages are the previous request's messages, then
the assistant message the proxy returned for it, then new messages, *extends* it
(:meth:`EpisodeTranscript.extension`) and stays on its branch; any other request (the
harness rewrote or dropped history, changed the tools, or the previous turn has no token
ids) starts a new branch. An episode whose requests form one extending sequence has one
branch, which is exactly one training row.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

Mode = Literal["token-in", "pass-through"]


def normal_message(m: dict[str, Any]) -> dict[str, Any]:
    """A message reduced to what the chat template renders: role, content, name, tool
    call id and tool calls by name and parsed arguments (so a client that re-serialises
    the assistant message, adds ``refusal: null`` or drops ``type`` still matches)."""
    out: dict[str, Any] = {"role": m.get("role"), "content": m.get("content") or ""}
    if isinstance(out["content"], list):  # content parts: their text, in order
        out["content"] = "".join(
            str(p.get("text", "")) for p in out["content"] if isinstance(p, dict)
        )
    for key in ("name", "tool_call_id"):
        if m.get(key):
            out[key] = m[key]
    calls = []
    for call in m.get("tool_calls") or []:
        fn = call.get("function") or {}
        args = fn.get("arguments")
        try:
            parsed = json.loads(args) if isinstance(args, str) else args
        except (ValueError, RecursionError):  # compared as the text it is
            parsed = args
        calls.append({"id": call.get("id"), "name": fn.get("name"), "arguments": parsed})
    if calls:
        out["tool_calls"] = calls
    return out


@dataclass
class ProxyTurn:
    """One request through the proxy (module docstring)."""

    index: int
    branch: int
    mode: Mode
    stream: bool
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    response_message: dict[str, Any]
    prompt_token_ids: list[int] | None
    completion_token_ids: list[int] | None
    logprobs: list[float] | None
    finish_reason: str | None
    model: str | None
    weight_version: str | None = None

    @property
    def capture_level(self) -> Literal["tokens", "text"]:
        """``tokens`` when both id lists were returned (logprobs too, when served)."""
        if self.prompt_token_ids is None or self.completion_token_ids is None:
            return "text"
        return "tokens"

    def as_record(self) -> dict[str, Any]:
        """The turn as plain JSON data."""
        return {
            "index": self.index,
            "branch": self.branch,
            "mode": self.mode,
            "stream": self.stream,
            "messages": self.messages,
            "tools": self.tools,
            "response_message": self.response_message,
            "prompt_token_ids": self.prompt_token_ids,
            "completion_token_ids": self.completion_token_ids,
            "logprobs": self.logprobs,
            "finish_reason": self.finish_reason,
            "model": self.model,
            "weight_version": self.weight_version,
            "capture_level": self.capture_level,
        }


@dataclass
class EpisodeTranscript:
    """The turns of one episode, in arrival order."""

    episode_id: str
    turns: list[ProxyTurn] = field(default_factory=list)

    @property
    def branches(self) -> int:
        return 1 + max((t.branch for t in self.turns), default=-1)

    def extension(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> tuple[ProxyTurn, list[dict[str, Any]]] | None:
        """``(previous turn, new messages)`` when ``messages`` extend the previous request
        (module docstring) and that turn has exact token ids; else None."""
        if not self.turns:
            return None
        last = self.turns[-1]
        if last.capture_level == "text" or (tools or None) != (last.tools or None):
            return None
        n = len(last.messages)
        if len(messages) < n + 2:
            return None
        if [normal_message(m) for m in messages[:n]] != [normal_message(m) for m in last.messages]:
            return None
        if normal_message(messages[n]) != normal_message(last.response_message):
            return None
        return last, messages[n + 1 :]

    def add(self, turn: ProxyTurn) -> None:
        self.turns.append(turn)

    def branch_of(self, prompt_ids: list[int] | None) -> int:
        """The branch of a new turn with ``prompt_ids``: the previous turn's when the ids
        begin with its prompt and completion ids exactly, else a new one."""
        if not self.turns:
            return 0
        last = self.turns[-1]
        if (
            prompt_ids is not None
            and last.prompt_token_ids is not None
            and last.completion_token_ids is not None
        ):
            head = last.prompt_token_ids + last.completion_token_ids
            if prompt_ids[: len(head)] == head:
                return last.branch
        return last.branch + 1
