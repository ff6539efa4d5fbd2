"""One name, one code path per author hook: the hooks are awaited, a sync hook is adapted.

``ToolEnv`` awaits its waiting hooks (``verify``, ``on_reply``, ``on_reset``, ``on_end``)
through :func:`settle`, so an author writes each hook once, as ``def`` or as ``async def``:

- ``def verify(...)`` for a verifier that computes its verdict in this process;
- ``async def verify(...)`` when judging waits on other processes (a sandbox, a verifier
  pool, an LLM-driven user simulator), so that other episodes keep running meanwhile.

A sync override may call a sync parent's hook with ``super()`` and use its value; an async
override awaits an async parent's. The former twin names (``verify_async``,
``on_reply_async``) are refused at class definition with the fix (:func:`refuse_twins`).
"""

from __future__ import annotations

from collections.abc import Awaitable
from inspect import isawaitable
from typing import TypeAlias, TypeVar

from gymforge.core.errors import UserError

T = TypeVar("T")

MaybeAsync: TypeAlias = T | Awaitable[T]
"""A hook's result: the value, or an awaitable of it (an ``async def`` hook's coroutine)."""

TWINS = {"verify_async": "verify", "on_reply_async": "on_reply"}
"""Former async twins of hooks, and the one name each was folded into."""


async def settle(value: MaybeAsync[T]) -> T:
    """The hook's value: awaited when the hook was ``async def``, as is when it was ``def``."""
    if value is None:  # most hooks return nothing: no type checks for that
        return value
    if isawaitable(value):
        return await value
    return value


def refuse_twins(cls: type) -> None:
    """Refuse a class that defines a former twin hook: the base no longer calls it, so its
    override would be silently ignored."""
    for twin, name in TWINS.items():
        if twin in vars(cls):
            raise UserError(
                f"{cls.__qualname__}.{twin} is no longer a hook: write the hook once as "
                f"`async def {name}(...)` (a plain `def {name}` works too)"
            )
