"""The server policies' settings: :class:`Sampling` (what each request asks for),
:class:`Retry` (how a failing call is retried), and :func:`split_settings`, which sorts CLI and
keyword settings into them and a policy factory's own options.
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gymforge.core.errors import UserError


@dataclass(frozen=True)
class Sampling:
    """Request settings. ``None`` leaves a setting to the server's default.

    ``return_token_ids`` adds vLLM's ``return_token_ids`` to the body (turn it off for
    servers that refuse unknown fields, such as hosted APIs); ``extra_body`` is merged into
    every request last (e.g. ``{"top_k": 20}``).

    ``parallel_tool_calls`` is not sent unless set. Sending it is an explicit opt-in with a
    cost: with vLLM's hermes tool parser it switches on a tool-call grammar whose forced
    tokens are not canonical tokenisations (the next turn's re-rendered prompt no longer
    extends the last one, so the TRL export refuses the episode) and whose recorded logprobs
    are not the sampling probabilities. gymforge asks for one call per turn anyway: more
    than one is ``Invalid`` (:mod:`gymforge.rollout.parsing`)."""

    temperature: float | None = 1.0
    top_p: float | None = None
    max_tokens: int | None = None
    stop: tuple[str, ...] | None = None
    logprobs: bool = True
    top_logprobs: int | None = None
    return_token_ids: bool = True
    parallel_tool_calls: bool | None = None
    extra_body: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Retry:
    """``max_attempts`` tries per call, each bounded by ``call_timeout`` seconds; between
    tries ``min(max_delay, base_delay * 2**k)`` scaled by a seeded factor in [0.5, 1)."""

    max_attempts: int = 6
    base_delay: float = 0.5
    max_delay: float = 8.0
    call_timeout: float = 300.0

    def delay(self, attempt: int, rng: random.Random, retry_after: float | None = None) -> float:
        d: float = min(self.max_delay, self.base_delay * 2**attempt) * (0.5 + rng.random() / 2)
        if retry_after is not None:
            d = max(d, min(retry_after, self.max_delay))
        return d


def split_settings(
    settings: Mapping[str, Any], factory_cls: type, label: str
) -> tuple[Sampling, Retry, dict[str, Any]]:
    """Sort ``settings`` into :class:`Sampling`, :class:`Retry` and ``factory_cls`` keyword
    options, converting CLI strings by annotation. ``None`` values are ignored (unset CLI
    flags pass through); an unknown key is a ``UserError`` naming the known ones."""
    groups: dict[str, dict[str, Any]] = {"sampling": {}, "retry": {}, "factory": {}}
    types = {
        **{k: ("sampling", f.type) for k, f in Sampling.__dataclass_fields__.items()},
        **{k: ("retry", f.type) for k, f in Retry.__dataclass_fields__.items()},
        **{
            k: ("factory", str(p.annotation))
            for cls in reversed(factory_cls.__mro__)
            if "__init__" in cls.__dict__ and cls is not object
            for k, p in inspect.signature(cls.__dict__["__init__"]).parameters.items()
            if k not in ("self", "model", "base_url", "sampling", "retry")
            and p.kind is not p.VAR_KEYWORD
        },
    }
    for key, value in settings.items():
        if value is None:
            continue
        if key not in types:
            raise UserError(f"unknown {label} setting {key!r}; known: {', '.join(sorted(types))}")
        group, kind = types[key]
        groups[group][key] = _coerce(str(kind), value)
    return Sampling(**groups["sampling"]), Retry(**groups["retry"]), groups["factory"]


def _coerce(kind: str, value: Any) -> Any:
    """A CLI string (or list) as the type a setting's annotation ``kind`` names."""
    if kind.startswith("tuple"):
        return (value,) if isinstance(value, str) else tuple(value)
    if not isinstance(value, str):
        return value
    if kind.startswith("int"):
        return int(value)
    if kind.startswith("float"):
        return float(value)
    if kind.startswith("bool"):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return value
