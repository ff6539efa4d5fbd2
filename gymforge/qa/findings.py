"""What a QA check reports a defect with, and how it names a difference: shared by the checks
and by what every QA episode runs (``gymforge.qa.truth_witness``), which the fresh process
imports without the checks."""

from __future__ import annotations

from typing import Any


class CheckFailed(Exception):
    """The check found a defect; the message says which."""

    def __init__(self, message: str, metrics: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.metrics = metrics or {}


def first_difference(a: Any, b: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """The first place where two JSON values differ: (path, a's value, b's value), or None.
    Paths read like ``observation.messages[1].content``."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in [*a, *(k for k in b if k not in a)]:
            if key not in a or key not in b:
                return (f"{path}.{key}".lstrip("."), a.get(key, "<absent>"), b.get(key, "<absent>"))
            found = first_difference(a[key], b[key], f"{path}.{key}")
            if found is not None:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found is not None:
                return found
        if len(a) != len(b):
            return (f"{path} (length)".lstrip("."), len(a), len(b))
        return None
    return None if a == b else (path.lstrip(".") or "value", a, b)


def short(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."
