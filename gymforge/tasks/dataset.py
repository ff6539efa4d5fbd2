"""JSONL datasets, pinned by content hash.

A dataset is a JSONL file of rows validated by a row model (``MathRow`` for math:
``{"task_id"?, "question", "answer"}``). Its ``content_hash`` is the SHA-256 of the file's
bytes; runs record it, and a task id names it: ``{name}@{hash12}/{row}``. A row's own
``task_id`` (any string, ``/`` and ``#`` included) resolves too. A bad line is refused with
its line number; nothing is half-loaded. With ``strict=False`` a bad line is instead kept
out and reported in ``Dataset.rejected`` (one ``file:line: problem`` each), and every other
row still loads. A row's id counts every non-blank line before it, refused ones included, so
a refused line never shifts the ids of the rows after it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gymforge.core.errors import ConfigError, UnknownTaskError
from gymforge.core.types import Task

MAX_ROW_BYTES = 1_000_000


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
    rejected: list[str] = field(default_factory=list)
    _index: dict[str, int] = field(default_factory=dict, repr=False)
    _refused: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def pin(self) -> str:
        return f"{self.name}@{self.content_hash[:12]}"

    def resolve(self, task_id: str) -> Task | None:
        """The task with this id, None if it is not this dataset's; UnknownTaskError naming
        the problem when it is the id of a row that was refused at load."""
        i = self._index.get(task_id)
        if i is None and task_id in self._refused:
            raise UnknownTaskError(
                f"task {task_id!r} is a dataset row refused at load: {self._refused[task_id]}"
            )
        return None if i is None else self.tasks[i]

    def __iter__(self) -> Iterator[Task]:
        return iter(self.tasks)

    def __len__(self) -> int:
        return len(self.tasks)

    def manifest(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "path": self.path,
            "sha256": self.content_hash,
            "rows": len(self.tasks),
        }
        if self.rejected:
            out["rejected"] = list(self.rejected)
        return out


def load_jsonl(
    path: str | Path,
    *,
    name: str | None = None,
    row_model: type[BaseModel] = MathRow,
    to_task: RowToTask = math_row_to_task,
    strict: bool = True,
) -> Dataset:
    """Load and validate every line; ConfigError names the first bad line (``strict``), or
    bad lines go to ``Dataset.rejected`` and the rest loads (``strict=False``). ``to_task``
    may raise ``ValueError`` to refuse a row that validates but makes no task."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as err:
        raise ConfigError(f"cannot read dataset {path}: {err.strerror or err}") from err
    digest = hashlib.sha256(data).hexdigest()
    ds = Dataset(name or p.stem, str(p), digest)
    rows = 0
    for n, raw in enumerate(data.splitlines(), 1):
        if not raw.strip():
            continue
        rows += 1
        try:
            _load_row(ds, (p.name, n, rows - 1), raw, row_model, to_task)
        except ConfigError as err:
            if strict:
                raise
            ds.rejected.append(str(err))
            ds._refused.setdefault(f"{ds.pin}/{rows - 1}", str(err))
    if not ds.tasks:
        why = f": {ds.rejected[0]}" if ds.rejected else ""
        raise ConfigError(f"dataset {path} has no rows{why}")
    return ds


def _load_row(
    ds: Dataset,
    where: tuple[str, int, int],
    raw: bytes,
    row_model: type[BaseModel],
    to_task: RowToTask,
) -> None:
    """Validate one line and append its task; ConfigError ``file:line: problem`` otherwise.
    ``where`` is ``(file name, line number, row index)``."""
    file, n, index = where
    if len(raw) > MAX_ROW_BYTES:
        raise ConfigError(f"{file}:{n}: line longer than {MAX_ROW_BYTES} bytes")
    try:
        row = row_model.model_validate(json.loads(raw))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ConfigError(f"{file}:{n}: not valid JSON ({err})") from err
    except ValidationError as err:
        e = err.errors()[0]
        where = ".".join(str(x) for x in e["loc"]) or "row"
        raise ConfigError(f"{file}:{n}: {where}: {e['msg']}") from err
    canonical = f"{ds.pin}/{index}"
    own = getattr(row, "task_id", None)
    task_id = own or canonical
    if task_id in ds._index:
        raise ConfigError(f"{file}:{n}: duplicate task_id {task_id!r}")
    try:
        prompt, truth = to_task(row)
    except ValueError as err:
        raise ConfigError(f"{file}:{n}: {err}") from err
    ds._index[task_id] = ds._index[canonical] = len(ds.tasks)
    ds.tasks.append(
        Task(
            task_id=task_id,
            family=ds.name,
            prompt=prompt,
            truth=truth,
            params={"row": index},
            difficulty=0,
        )
    )
