"""Data that crosses the environment boundary: messages, actions, observations, tasks.

Everything here is a pydantic v2 model so it serialises to plain JSON for trajectories,
replay and remote environments. Models are frozen: an observation handed to a policy
cannot be edited behind the environment's back.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from gymforge.core.built import built, exact_init, str_keyed

JSON = Any
"""A JSON-serialisable value (dict, list, str, int, float, bool or None)."""

State = dict[str, Any]
"""World state as returned by ``Environment.snapshot()``: JSON-serialisable, canonicalisable."""


_SURROGATE = re.compile("[\ud800-\udfff]")


MAX_NESTING = 100
"""Deepest nesting of lists/dicts accepted in action arguments; deeper input is refused at
construction (a parser turns that into an ``Invalid`` action)."""


def scrub_text(value: Any, _depth: int = 0) -> Any:
    """Replace lone surrogates (which JSON escapes like ``\\ud800`` can smuggle in) with
    U+FFFD in every string of ``value``, so any text can be encoded as UTF-8 downstream.
    Raises ValueError for non-finite floats and for structures nested deeper than
    ``MAX_NESTING``: neither can be written as canonical JSON."""
    if isinstance(value, str):
        if value.isascii():  # O(1) in CPython: most text needs no regex scan
            return value
        return _SURROGATE.sub("\ufffd", value) if _SURROGATE.search(value) else value
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("NaN and infinities are not JSON; refused")
    if _depth > MAX_NESTING and isinstance(value, dict | list | tuple):
        raise ValueError(f"nested deeper than {MAX_NESTING} levels")
    if isinstance(value, dict):  # ASCII text, None, ints and bools are kept without a call
        return {
            k if type(k) is str and k.isascii() else scrub_text(k): v
            if v is None or type(v) in _KEPT or (type(v) is str and v.isascii())
            else scrub_text(v, _depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return type(value)(scrub_text(v, _depth + 1) for v in value)
    return value


_KEPT = (int, bool)


def not_json(value: Any, path: str) -> str | None:
    """Where ``value`` (found at ``path``) holds something JSON cannot carry, and what (a
    NaN or an infinity, a key that is not a string, any other type); None when it is
    JSON. The first found, depth first; nesting is not bounded here."""
    if value is None or isinstance(value, str | bool | int):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{path}: {value} is not JSON"
    if isinstance(value, list | tuple):
        for i, v in enumerate(value):
            if (bad := not_json(v, f"{path}[{i}]")) is not None:
                return bad
        return None
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                return f"{path}: key {k!r} ({type(k).__name__}) is not a string"
            if (bad := not_json(v, f"{path}.{k}")) is not None:
                return bad
        return None
    return f"{path}: {type(value).__name__} is not JSON"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _Text(_Frozen):
    """Models carrying model- or user-supplied text: strings are scrubbed on construction."""

    @model_validator(mode="before")
    @classmethod
    def _scrub(cls, data: Any) -> Any:
        return scrub_text(data)


Role = Literal["system", "user", "assistant", "tool"]
_ROLES = frozenset(get_args(Role))
_MESSAGE_KEYS = frozenset({"role", "content", "name", "tool_call_id"})


def _message_fields(data: dict[str, Any]) -> dict[str, Any] | None:
    """``Message(**data)``'s fields when each value is exactly its declared type (a role of
    the literal, ``str`` text, None or ``str`` for the optional two): validation keeps
    them, scrubbed as ``_Text`` scrubs them. Else None: the constructor validates."""
    role, content = data.get("role"), data.get("content")
    name, call_id = data.get("name"), data.get("tool_call_id")
    if (
        type(role) is not str
        or role not in _ROLES
        or type(content) is not str
        or not (name is None or type(name) is str)
        or not (call_id is None or type(call_id) is str)
        or not _MESSAGE_KEYS.issuperset(data)
    ):
        return None
    if not content.isascii():
        content = scrub_text(content)
    if name is not None and not name.isascii():
        name = scrub_text(name)
    if call_id is not None and not call_id.isascii():
        call_id = scrub_text(call_id)
    return {"role": role, "content": content, "name": name, "tool_call_id": call_id}


@exact_init(_message_fields)
class Message(_Text):
    """One chat message in OpenAI shape. ``tool_call_id``/``name`` are set on tool results."""

    role: Role
    content: str
    name: str | None = None
    tool_call_id: str | None = None


class ToolCall(_Text):
    """The policy asks the environment to run tool ``name`` with ``arguments``."""

    kind: Literal["tool_call"] = "tool_call"
    name: str
    arguments: dict[str, JSON] = Field(default_factory=dict)
    call_id: str = "call_0"

    @field_validator("arguments")
    @classmethod
    def _plain_json(cls, v: dict[str, JSON]) -> dict[str, JSON]:
        """Arguments are what a model's JSON parses to; anything else is the policy's bug,
        refused here, by path, rather than deep inside an environment's step."""
        bad = not_json(v, "arguments")
        if bad is not None:
            raise ValueError(bad)
        return v


class Reply(_Text):
    """A plain assistant message: an answer, a question to the user, or a final report."""

    kind: Literal["reply"] = "reply"
    text: str


class Invalid(_Text):
    """Model output that could not be parsed into an action. Handled by the MalformedPolicy."""

    kind: Literal["invalid"] = "invalid"
    raw: str
    error: str


Action = Annotated[ToolCall | Reply | Invalid, Field(discriminator="kind")]
"""What a policy does in one step: exactly one of ToolCall, Reply or Invalid."""


class Observation(_Frozen):
    """What the agent sees after reset or a step.

    ``messages`` are the chat messages *new* at this step (the policy keeps the
    conversation); ``data`` is the structured data they were rendered from; ``tools``
    (set on reset) are the OpenAI-compatible tool schemas on offer. ``tokens`` counts
    ``messages`` with the tokenizer named by ``tokenizer``; ``tokens_exact`` is False when
    that count is the documented approximation (see ``gymforge.core.tokens``).
    """

    messages: tuple[Message, ...]
    data: dict[str, JSON] = Field(default_factory=dict)
    tools: tuple[dict[str, JSON], ...] = ()
    tokens: int = 0
    tokenizer: str = "approx:utf8/4"
    tokens_exact: bool = False

    def text(self) -> str:
        """All message contents joined: convenient for single-turn policies and logs."""
        return "\n".join(m.content for m in self.messages)


class Task(_Frozen):
    """A generated or loaded task. ``truth`` is hidden from the agent; only verifiers read it."""

    task_id: str
    family: str
    prompt: str
    truth: dict[str, JSON] = Field(default_factory=dict)
    params: dict[str, JSON] = Field(default_factory=dict)
    difficulty: int = 0
    split: Literal["train", "heldout"] = "train"


def task_of(
    task_id: str,
    family: str,
    prompt: str,
    truth: dict[str, JSON],
    params: dict[str, JSON],
    difficulty: int,
) -> Task:
    """``Task(task_id=..., family=..., prompt=..., truth=..., params=..., difficulty=...)``.
    Given values of exactly their declared types (``str``, ``dict`` keyed by ``str`` only,
    ``int``), which validation keeps as they are, it is built here as validation builds it:
    the fields in their order, each dict a copy, ``split`` its default, those six fields
    set. Any other values are validated by the constructor
    (tests/tasks/test_generation_fast_paths.py)."""
    if (
        type(task_id) is str
        and type(family) is str
        and type(prompt) is str
        and type(difficulty) is int
        and str_keyed(truth)
        and str_keyed(params)
    ):
        fields: dict[str, Any] = {"task_id": task_id, "family": family, "prompt": prompt}
        fields.update(truth=dict(truth), params=dict(params), difficulty=difficulty, split="train")
        return built(Task, fields, {"task_id", "family", "prompt", "truth", "params", "difficulty"})
    return Task(
        task_id=task_id,
        family=family,
        prompt=prompt,
        truth=truth,
        params=params,
        difficulty=difficulty,
    )
