"""What every code judge of a run shares: the sandbox backend (and ``SandboxDown``, its
failure as infrastructure), the limits, what each task kind's judging reads of its judge
(``Judging``), and the two comparisons that decide a test (type-strict equality of plain
data; stdio output lines)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from gymforge.core.errors import InfraError
from gymforge.sandbox import Limits
from gymforge.sandbox.backend import BaseBackend
from gymforge.verify.services import current


class SandboxDown(InfraError):
    """The sandbox failed as infrastructure (its worker or container engine gone): the
    answer was not judged, so the episode is retried, never scored."""


def shared_backend() -> BaseBackend:
    """The sandbox backend of the run this code runs in (``RunServices.sandbox``: the run's
    settings choose the kind, the workers, the uids and whether isolation may be skipped);
    outside any run, the library default's."""
    return current().sandbox()


def close_shared_backend() -> None:
    """Close the current services' resources (outside any run: the library default's, which
    start again from the environment on next use)."""
    current().close()


@dataclass(frozen=True)
class JudgeConfig:
    limits: Limits = field(
        default_factory=lambda: Limits(
            wall_time=10.0,
            cpu_time=6.0,
            memory_bytes=512 << 20,
            output_bytes=1 << 20,
            call_timeout=2.0,
            return_bytes=1 << 20,
        )
    )
    stdio_limits: Limits = field(
        default_factory=lambda: Limits(wall_time=4.0, cpu_time=3.0, output_bytes=4 << 20)
    )


class Judging(Protocol):
    """What a task kind's judging reads of its ``CodeJudge``: the configuration, and the
    backend, looked up at each use as the judge's own methods look it up."""

    config: JudgeConfig

    @property
    def backend(self) -> BaseBackend: ...


MAX_CALL_TIMEOUT = 60.0
"""The ceiling of a task's own per-call limit (``truth["limits"]["call_timeout"]``), seconds."""
MAX_TASK_TIMEOUT = 300.0
"""The ceiling of a task's own whole-task limit (``truth["limits"]["task_timeout"]``), seconds."""
NEAR_LIMIT = 0.5
"""A call that takes this fraction of its limit or more is near it (``near_limit``)."""


def limits_for(base: Limits, truth: Mapping[str, Any], calls: int) -> Limits:
    """``base`` with a task's own time limits (``truth["limits"]``: ``call_timeout``, per
    call or per stdio run, and ``task_timeout``, the whole job or session; seconds), each
    capped at its ceiling. A task that raises only the per-call limit gets a whole-task limit
    that fits ``calls`` calls of it. Never lower than ``base``: a row can give a slow,
    correct reference room, not take room away."""
    own = truth.get("limits") or {}
    call, task = own.get("call_timeout"), own.get("task_timeout")
    if not call and not task:
        return base
    upd: dict[str, Any] = {}
    per_call = base.call_timeout
    if call:
        per_call = max(base.call_timeout, min(float(call), MAX_CALL_TIMEOUT))
        upd["call_timeout"] = per_call
    whole = float(task) if task else per_call * max(1, calls) + base.wall_time
    wall = max(base.wall_time, min(whole, MAX_TASK_TIMEOUT))
    if wall > base.wall_time:
        upd["wall_time"] = wall
        upd["cpu_time"] = wall
    return base.model_copy(update=upd)


def stdio_limits_for(base: Limits, truth: Mapping[str, Any]) -> Limits:
    """A stdio task's limits per run: its own ``call_timeout`` (capped at the ceiling, never
    below ``base``) is the wall and CPU time of each run."""
    call = (truth.get("limits") or {}).get("call_timeout")
    if not call:
        return base
    wall = max(base.wall_time, min(float(call), MAX_CALL_TIMEOUT))
    return base.model_copy(update={"wall_time": wall, "cpu_time": wall})


def near_limit(slowest_ms: float | None, limit_s: float) -> bool:
    """Did the slowest call take ``NEAR_LIMIT`` of its limit or more?"""
    return slowest_ms is not None and slowest_ms >= NEAR_LIMIT * limit_s * 1e3


def from_json(v: Any) -> Any:
    """An expected value as stored in JSON: ``{"$tuple": [...]}`` marks a tuple (the calls
    kind's judge and the exported Harbor verifier read them alike)."""
    if isinstance(v, dict):
        if set(v) == {"$tuple"}:
            return tuple(from_json(x) for x in v["$tuple"])
        return {k: from_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [from_json(x) for x in v]
    return v


def strict_equal(a: Any, b: Any) -> bool:
    """Equality that also requires the same builtin types all the way down (floats compare
    with a 1e-9 relative tolerance)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return bool(a == b or abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b)))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(strict_equal(a[k], b[k]) for k in a)
    return bool(a == b)


def normalise_output(text: str) -> list[str]:
    """Lines without trailing whitespace, without trailing empty lines. Nothing else."""
    lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines
