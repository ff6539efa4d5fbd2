"""Reads and writes of world tools: idempotency keys, transactions and world faults.

Decorate a tool method with ``@world_write`` (under ``@tool(writes=True)``) and give it an
``idempotency_key: str = ""`` parameter::

    @tool(writes=True)
    @world_write
    def issue_refund(self, payment_id: str, amount_cents: int, idempotency_key: str = "") -> dict:
        ...

Each write then runs in a savepoint (a ``ToolError`` rolls everything back), and a non-empty
key makes it idempotent: the same key with the same arguments returns the stored response
without running again; the same key with other arguments is a ``conflict``.

``WorldFaults`` adds the faults the generic ``FaultPlan`` cannot express, decided from
``(task_id, seed, tool, call index)`` alone (``gymforge.core.seeding.uniform``):

- ``commit_timeout``: the write IS applied and committed, then the agent sees a retryable
  ``timeout``. Retrying with the same key is safe; retrying without one applies it twice.
- ``rate_limited``: the call is refused before it runs, with a retryable ``rate_limited``.
- ``permission_denied``: the call is refused before it runs, with a retryable
  ``permission_denied`` (an expired session, a real API's 401: a retry after signing in
  again succeeds). Unlike ``FaultPlan``'s non-retryable kind, the agent is told it may
  retry, and a read is refused as well as a write.

Every call also fills ``WriteGuard.attrs`` (``effect``, ``replay``, ``resubmit``...) for the
action log that process rules read. ``resubmit`` marks a replay of a write whose success the
agent had already seen: a duplicate submission.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from pydantic import BaseModel

from gymforge.core.errors import ToolError
from gymforge.core.seeding import canonical_json, stable_hash, uniform
from gymforge.verify.rules import Match, Never, Rule
from gymforge.world.db import WorldDB

WorldFaultKind = Literal["commit_timeout", "rate_limited", "permission_denied"]
MAX_TEXT = 2000
F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class WorldFaults:
    """Probabilities per call (``commit_timeout`` fires on writes only), optionally limited
    to ``tools``, plus ``forced`` ``(tool, call_index, kind)`` entries that always fire."""

    commit_timeout: float = 0.0
    rate_limited: float = 0.0
    tools: frozenset[str] | None = None
    forced: tuple[tuple[str, int, WorldFaultKind], ...] = ()
    permission_denied: float = 0.0

    def __post_init__(self) -> None:
        rates = (self.commit_timeout, self.rate_limited, self.permission_denied)
        if not all(math.isfinite(r) and r >= 0 for r in rates) or sum(rates) > 1:
            raise ValueError("world fault rates must be finite, >= 0 and sum to at most 1")

    def decide(
        self, task_id: str, seed: int, tool: str, index: int, writes: bool
    ) -> WorldFaultKind | None:
        for f_tool, f_index, kind in self.forced:
            if (f_tool, f_index) == (tool, index):
                return kind
        if not (self.rate_limited or self.commit_timeout or self.permission_denied) or (
            self.tools is not None and tool not in self.tools
        ):
            return None
        u = uniform("world-fault", task_id, seed, tool, index)
        if u < self.rate_limited:
            return "rate_limited"
        # permission faults take the slice after rate limits: with none, nothing shifts
        edge = self.rate_limited + self.permission_denied
        if u < edge:
            return "permission_denied"
        if writes and u < edge + self.commit_timeout:
            return "commit_timeout"
        return None


NO_WORLD_FAULTS = WorldFaults()
INT64 = 1 << 63


def check_storable(name: str, value: Any, max_text: int = MAX_TEXT) -> None:
    """Refuse (``validation``) an argument a world cannot store as a real API would: text
    over ``max_text`` characters or an integer outside SQLite's 64 bits, at any depth (the
    values and keys of a ``changes`` object, the cells of a range, the fields of an argument
    typed by a model, such as a citation's quote). The JSON Schema of an ``int`` has no
    bound, so without this a schema-valid call crashed the tool (``internal``)."""
    if isinstance(value, str):
        if len(value) > max_text:
            raise ToolError("validation", f"{name} is longer than {max_text} characters")
    elif isinstance(value, int):
        if not -INT64 <= value < INT64:
            raise ToolError("validation", f"{name} is out of range")
    elif isinstance(value, dict):
        for key, item in value.items():
            check_storable(f"{name} key", key, max_text)
            check_storable(f"{name}.{str(key)[:40]}", item, max_text)
    elif isinstance(value, list | tuple):
        for item in value:
            check_storable(name, item, max_text)
    elif isinstance(value, BaseModel):
        for field in type(value).model_fields:
            check_storable(f"{name}.{field}", getattr(value, field), max_text)


WRITE_RULES: tuple[Rule, ...] = (
    Never(Match("tool.*", where={"resubmit": True}), name="no_duplicate_submission"),
    Never(Match("tool.*", where={"writes": True, "keyed": False}), name="idempotency_key_required"),
)
"""Process rules every keyed-write world shares: a write is never sent without a key, and a
write whose success the agent saw is never sent again."""


class WriteGuard:
    """Per-episode bookkeeping of world tool calls. Owned by a ``WorldToolEnv``."""

    def __init__(self, max_text: int = MAX_TEXT) -> None:
        self.max_text = max_text
        """The longest text a write argument may hold, at any depth (``check_storable``)."""
        self.reset(None, "", 0, NO_WORLD_FAULTS)

    def reset(self, db: WorldDB | None, task_id: str, seed: int, faults: WorldFaults) -> None:
        self.db, self.task_id, self.seed, self.faults = db, task_id, seed, faults
        self.calls: dict[str, int] = {}
        self.attrs: dict[str, Any] = {}

    def _fault(self, tool: str, writes: bool) -> WorldFaultKind | None:
        index = self.calls.get(tool, 0)
        self.calls[tool] = index + 1
        fault = self.faults.decide(self.task_id, self.seed, tool, index, writes)
        if fault is not None:
            self.attrs["world_fault"] = fault
        if fault == "rate_limited":
            raise ToolError("rate_limited", "rate limit exceeded; retry shortly", retryable=True)
        if fault == "permission_denied":
            raise ToolError(
                "permission_denied",
                "permission denied: your session expired; it was renewed, retry the call",
                retryable=True,
            )
        return fault

    def read(self, tool: str, call: Callable[[], Any]) -> Any:
        self._fault(tool, writes=False)
        return call()

    def write(self, tool: str, call: Callable[[], Any], kwargs: dict[str, Any]) -> Any:
        assert self.db is not None, "write before reset"
        db = self.db
        self.attrs["effect"] = False
        for name, value in kwargs.items():
            check_storable(name, value, self.max_text)
        fault = self._fault(tool, writes=True)
        key = str(kwargs.get("idempotency_key") or "")
        request_id = ""
        if key:
            args = {k: v for k, v in kwargs.items() if k != "idempotency_key"}
            request_id = stable_hash(tool, args).hex()[:32]
            self.attrs["key"] = key
            rec = db.one(
                "SELECT tool, request, response, acked FROM _idempotency WHERE key = ?", key
            )
            if rec is not None:
                if (rec["tool"], rec["request"]) != (tool, request_id):
                    raise ToolError(
                        "conflict", "this idempotency key was already used for a different request"
                    )
                self.attrs.update(replay=True, resubmit=bool(rec["acked"]))
                if not rec["acked"]:
                    db.update("_idempotency", key, acked=1)
                return json.loads(rec["response"])
        with db.transaction():
            result = call()
            if key:
                db.insert(
                    "_idempotency",
                    {
                        "key": key,
                        "tool": tool,
                        "request": request_id,
                        "response": canonical_json(result),
                        "acked": 0 if fault == "commit_timeout" else 1,
                    },
                )
        self.attrs["effect"] = True
        if fault == "commit_timeout":
            raise ToolError(
                "timeout",
                "the request timed out before a response arrived; it may or may not have "
                "been applied",
                retryable=True,
            )
        return result


def world_read(fn: F) -> F:
    """A read tool subject to world faults (rate limits)."""

    @functools.wraps(fn)
    def wrapper(self: Any, **kwargs: Any) -> Any:
        return self.writes.read(fn.__name__, lambda: fn(self, **kwargs))

    return wrapper  # type: ignore[return-value]


def world_write(fn: F) -> F:
    """A write tool: idempotency key, savepoint, world faults, action-log attributes. It
    declares ``timeout`` a side-effecting error (``commit_timeout`` applies the write)."""

    @functools.wraps(fn)
    def wrapper(self: Any, **kwargs: Any) -> Any:
        return self.writes.write(fn.__name__, lambda: fn(self, **kwargs), kwargs)

    wrapper.__gymforge_error_effects__ = ("timeout",)  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]
