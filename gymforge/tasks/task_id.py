"""Family task ids: ``{family}/v{version}/d{difficulty}/s{seed}``, and with explicit params
(a curriculum or hard-negative variant) ``{family}/v{version}/d{difficulty}/s{seed}/k=v,k=v``
with JSON values. ``parse_task_id`` reads one into a ``TaskId``; ``str(TaskId)`` writes it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from gymforge.core.errors import UnknownTaskError

TASK_ID = re.compile(
    r"^(?P<family>[\w.\-]+)/v(?P<version>[0-9]+)/d(?P<difficulty>[0-9]+)/s(?P<seed>[0-9]+)"
    r"(?:/(?P<params>[^/]+))?$"
)


@dataclass(frozen=True)
class TaskId:
    """A parsed family task id. ``params`` is None when the seed draws them."""

    family: str
    version: int
    difficulty: int
    seed: int
    params: dict[str, Any] | None = None

    def __str__(self) -> str:
        base = f"{self.family}/v{self.version}/d{self.difficulty}/s{self.seed}"
        if self.params is None:
            return base
        return (
            base
            + "/"
            + ",".join(
                f"{k}={json.dumps(v, separators=(',', ':'))}"
                for k, v in sorted(self.params.items())
            )
        )


_LAST_PARSED: list[tuple[str, TaskId]] = []
"""The last id parsed without params: resolving a task parses its id twice (the source finds
the family, the family the seed). A ``TaskId`` without params is immutable, so sharing it is
safe."""


def parse_task_id(task_id: str) -> TaskId:
    """Parse a family task id, or raise UnknownTaskError."""
    last = _LAST_PARSED[0] if _LAST_PARSED else None
    if last is not None and last[0] == task_id:
        return last[1]
    tid = _parse_task_id(task_id)
    if tid.params is None:
        _LAST_PARSED[:] = [(task_id, tid)]
    return tid


def _parse_task_id(task_id: str) -> TaskId:
    m = TASK_ID.match(task_id)
    if not m:
        raise UnknownTaskError(f"not a family task id (family/vN/dN/sN): {task_id[:200]!r}")
    family, version, difficulty, seed, given = m.groups()
    params = None
    if given:
        params = {}
        for item in given.split(","):
            key, eq, raw = item.partition("=")
            try:
                params[key] = json.loads(raw)
            except (json.JSONDecodeError, RecursionError):
                eq = ""
            if not eq or not key:
                raise UnknownTaskError(f"bad params in task id: {task_id[:200]!r}")
    try:
        return _task_id(family, int(version), int(difficulty), int(seed), params)
    except ValueError:  # past int's limit on decimal digits
        raise UnknownTaskError(f"a number too long in task id: {task_id[:200]!r}") from None


def _task_id(
    family: str, version: int, difficulty: int, seed: int, params: dict[str, Any] | None
) -> TaskId:
    """``TaskId(family, version, difficulty, seed, params)``: the instance its frozen
    dataclass ``__init__`` makes (its fields in its ``__dict__``, in field order, nothing
    else), without that ``__init__``'s call of ``object.__setattr__`` per field
    (``tests/tasks/test_generation_fast_paths.py`` holds the two equal)."""
    tid = _new(TaskId)
    fields = {
        "family": family,
        "version": version,
        "difficulty": difficulty,
        "seed": seed,
        "params": params,
    }
    _setattr(tid, "__dict__", fields)
    return tid


_new = object.__new__
_setattr = object.__setattr__
