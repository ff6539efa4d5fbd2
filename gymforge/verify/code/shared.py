"""What every code judge in a process shares: the sandbox backend, the limits, and the two
comparisons that decide a test (type-strict equality of plain data; stdio output lines)."""

from __future__ import annotations

import atexit
import os
import threading
from dataclasses import dataclass, field
from typing import Any

from gymforge.sandbox import Limits, get_backend
from gymforge.sandbox.backend import BaseBackend
from gymforge.sandbox.preflight import unsafe_requested
from gymforge.sandbox.selection import selected_kind

_lock = threading.Lock()
_backend: BaseBackend | None = None


def shared_backend() -> BaseBackend:
    """The process's one sandbox backend: created on first use, closed at exit.

    Backend: ``GYMFORGE_SANDBOX`` (``local``, the default, or ``docker``). Workers:
    ``GYMFORGE_SANDBOX_WORKERS`` (default: the CPU count, at most 8). Set
    ``GYMFORGE_UNSAFE_NO_ISOLATION=1`` to run without isolation (prints a loud warning);
    ``GYMFORGE_SANDBOX_UID_BASE`` picks the workers' uids."""
    global _backend
    with _lock:
        if _backend is None:
            workers = int(os.environ.get("GYMFORGE_SANDBOX_WORKERS") or min(8, os.cpu_count() or 2))
            kw: dict[str, Any] = {
                "workers": max(1, workers),
                "unsafe_no_isolation": unsafe_requested(),
            }
            if os.environ.get("GYMFORGE_SANDBOX_UID_BASE"):
                kw["uid_base"] = int(os.environ["GYMFORGE_SANDBOX_UID_BASE"])
            _backend = get_backend(selected_kind(), **kw)
            atexit.register(close_shared_backend)
        return _backend


def close_shared_backend() -> None:
    global _backend
    with _lock:
        b, _backend = _backend, None
    if b is not None:
        b.close()


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
