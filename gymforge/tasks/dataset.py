"""JSONL datasets, pinned by content hash.

A dataset is a JSONL file of rows validated by a row model (``MathRow`` for math:
``{"task_id"?, "question", "answer"}``). Its ``content_hash`` is the SHA-256 of the file's
bytes; runs record it, and a task id names it: ``{name}@{hash12}/{row}``. A row's own
``task_id`` (any string, ``/`` and ``#`` included) resolves too. Rows are training tasks
unless the file has a ``split`` column (``"train"`` or ``"heldout"`` per row). A bad line is
refused with its line number; nothing is half-loaded.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gymforge.core.errors import ConfigError
from gymforge.core.types import Task

MAX_ROW_BYTES = 1_000_000
SPLITS = ("train", "heldout")


class MathRow(BaseModel):
    """A math dataset row. ``answer`` is the gold answer as LaTeX or plain text."""

    model_config = ConfigDict(extra="allow")

    task_id: str | None = Field(default=None, min_length=1, max_length=500)
    question: str = Field(min_length=1)
    answer: str = Field(min_length=1)


RowToTask = Callable[[BaseModel], tuple[str, dict[str, Any]]]


def math_row_to_task(row: BaseModel) -> tuple[str, dict[str, Any]]:
    assert isinstance(row, MathRow)
    return row.question, {"answer": row.answer}


@dataclass
class Dataset:
    """A loaded, hash-pinned dataset. ``tasks`` are in file order."""

    name: str
    path: str
    content_hash: str
    tasks: list[Task] = field(default_factory=list)
    _index: dict[str, int] = field(default_factory=dict, repr=False)

    @property
    def pin(self) -> str:
        return f"{self.name}@{self.content_hash[:12]}"

    def resolve(self, task_id: str) -> Task | None:
        i = self._index.get(task_id)
        return None if i is None else self.tasks[i]

    def __iter__(self) -> Iterator[Task]:
        return iter(self.tasks)

    def __len__(self) -> int:
        return len(self.tasks)

    def manifest(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": self.path,
            "sha256": self.content_hash,
            "rows": len(self.tasks),
        }


def load_jsonl(
    path: str | Path,
    *,
    name: str | None = None,
    row_model: type[BaseModel] = MathRow,
    to_task: RowToTask = math_row_to_task,
) -> Dataset:
    """Load and validate every line; ConfigError names the first bad line."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as err:
        raise ConfigError(f"cannot read dataset {path}: {err.strerror or err}") from err
    digest = hashlib.sha256(data).hexdigest()
    ds = Dataset(name or p.stem, str(p), digest)
    for n, raw in enumerate(data.splitlines(), 1):
        if not raw.strip():
            continue
        if len(raw) > MAX_ROW_BYTES:
            raise ConfigError(f"{p.name}:{n}: line longer than {MAX_ROW_BYTES} bytes")
        try:
            row = row_model.model_validate(json.loads(raw))
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise ConfigError(f"{p.name}:{n}: not valid JSON ({err})") from err
        except ValidationError as err:
            e = err.errors()[0]
            where = ".".join(str(x) for x in e["loc"]) or "row"
            raise ConfigError(f"{p.name}:{n}: {where}: {e['msg']}") from err
        canonical = f"{ds.pin}/{len(ds.tasks)}"
        own = getattr(row, "task_id", None)
        task_id = own or canonical
        if task_id in ds._index:
            raise ConfigError(f"{p.name}:{n}: duplicate task_id {task_id!r}")
        prompt, truth = to_task(row)
        split = getattr(row, "split", None) or "train"
        if split not in SPLITS:
            raise ConfigError(f"{p.name}:{n}: split: must be train or heldout, not {split!r}")
        ds._index[task_id] = ds._index[canonical] = len(ds.tasks)
        ds.tasks.append(
            Task(
                task_id=task_id,
                family=ds.name,
                prompt=prompt,
                truth=truth,
                params={"row": len(ds.tasks)},
                difficulty=0,
                split=split,
            )
        )
    if not ds.tasks:
        raise ConfigError(f"dataset {path} has no rows")
    return ds
