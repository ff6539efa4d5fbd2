"""What the three TRL adapters share: naming an environment and reading a completion.

The TRL modules import in one order: this module, then ``trl_env`` and ``trl_rollout``, then
``trl`` (the facade, which re-exports these names); nothing imports back up that order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gymforge.core.env import Environment
from gymforge.core.errors import UserError

EnvLike = str | Callable[[], Environment]
"""A built-in environment id / import path (``"digits"``), or a zero-argument factory."""


def env_factory(env: EnvLike) -> Callable[[], Environment]:
    """The zero-argument factory behind ``env`` (ids resolve through the registry)."""
    if isinstance(env, str):
        from gymforge.registry.resolve import resolve_factory

        return resolve_factory(env)
    if not callable(env):
        raise UserError(f"expected an environment id or factory, got {type(env).__name__}")
    return env


def completion_text(completion: Any) -> str:
    """The final assistant text of a TRL completion: a string, or a list of chat messages
    (the last assistant message's content)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        for message in reversed(completion):
            if isinstance(message, dict) and message.get("role") == "assistant":
                content = message.get("content")
                if isinstance(content, list):  # content parts
                    return "".join(p.get("text", "") for p in content if isinstance(p, dict))
                return "" if content is None else str(content)
        return ""
    raise TypeError(f"unsupported completion type {type(completion).__name__}")
