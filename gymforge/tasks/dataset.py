"""JSONL datasets, pinned by content hash.

A dataset is a JSONL file (or the same file gzip-compressed: ``.jsonl.gz``, detected by its
magic bytes, whatever its name) of rows validated by a row model (``MathRow`` for math:
``{"task_id"?, "question", "answer"}``). Its ``content_hash`` is the SHA-256 of the
decompressed bytes, so a file and its gzip pin the same; runs record it, and a task id names
it: ``{name}@{hash12}/{row}``. A row's own ``task_id`` (any string, ``/`` and ``#`` included)
resolves too.

A bad line is refused with its file name and line number. By default nothing is
half-loaded (the first bad line raises). With ``strict=False`` every good row loads, each bad
line becomes one entry of ``Dataset.errors`` (``file:line: what is wrong``), and a bad row's
own ``task_id``, when it has one, resolves to that error (``UnknownTaskError``) instead of
"no such task", so an answer to it is reported rather than silently lost; so does its
position id ``{name}@{hash12}/{row}``. ``row`` counts every non-blank line, bad ones included,
so a bad line never shifts the ids of the rows after it onto other tasks.
Rows are training tasks unless the file has a ``split`` column (``"train"`` or
``"heldout"`` per row).

**Shapes.** An environment that reads several published row shapes passes ``shape``: a
function from the file's first JSON-object row to a ``RowShape`` (its row model, its
row-to-task function and one sentence saying how the file is read). The whole file is then
read in that shape, so a row that does not fit it is a ``file:line`` error rather than a task
read some other way; ``Dataset.shape`` and the manifest name the shape.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gymforge.core.errors import ConfigError, UnknownTaskError
from gymforge.core.types import Task
from gymforge.tasks.truth import AnswerTruth
from gymforge.tasks.truth_dump import dump_truth

MAX_ROW_BYTES = 1_000_000
MAX_DATASET_BYTES = 4 << 30  # decompressed; a gzip bomb stops here
GZIP_MAGIC = b"\x1f\x8b"
SPLITS = ("train", "heldout")


class MathRow(BaseModel):
    """A math dataset row. ``answer`` is the gold answer as LaTeX or plain text."""

    model_config = ConfigDict(extra="allow")

    task_id: str | None = Field(default=None, min_length=1, max_length=500)
    question: str = Field(min_length=1)
    answer: str = Field(min_length=1)


RowToTask = Callable[[BaseModel], tuple[str, BaseModel]]
"""A dataset row -> ``(prompt, truth)``; the truth model is dumped into ``Task.truth``."""


@dataclass(frozen=True)
class RowShape:
    """How every row of one file is read: ``name`` goes into the manifest, ``note`` is the
    one line a command prints (``read as GSM8K: gold after ####``)."""

    name: str
    note: str
    row_model: type[BaseModel]
    to_task: RowToTask


ShapeOf = Callable[[dict[str, Any]], RowShape]
"""The file's first JSON-object row -> the shape every row of the file is read in."""


def math_row_to_task(row: BaseModel) -> tuple[str, BaseModel]:
    assert isinstance(row, MathRow)
    return row.question, AnswerTruth(answer=row.answer)


@dataclass
class Dataset:
    """A loaded, hash-pinned dataset. ``tasks`` are in file order."""

    name: str
    path: str
    content_hash: str
    tasks: list[Task] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # strict=False: one line per bad row
    shape: RowShape | None = None
    _index: dict[str, int] = field(default_factory=dict, repr=False)
    _bad: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def pin(self) -> str:
        return f"{self.name}@{self.content_hash[:12]}"

    def resolve(self, task_id: str) -> Task | None:
        """The task, or None if the id is not this dataset's. ``UnknownTaskError`` (saying
        what was wrong, with file and line) for the id of a row that did not load."""
        i = self._index.get(task_id)
        if i is None and task_id in self._bad:
            raise UnknownTaskError(f"task {task_id[:200]!r} did not load: {self._bad[task_id]}")
        return None if i is None else self.tasks[i]

    def __iter__(self) -> Iterator[Task]:
        return iter(self.tasks)

    def __len__(self) -> int:
        return len(self.tasks)

    def manifest(self) -> dict[str, Any]:
        shape = {} if self.shape is None else {"shape": self.shape.name}
        return {
            "name": self.name,
            "path": self.path,
            "sha256": self.content_hash,
            "rows": len(self.tasks),
            **shape,
        }


def read_dataset_bytes(path: str | Path, what: str = "dataset") -> bytes:
    """The file's bytes, decompressed if it is gzip. ConfigError if unreadable."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as err:
        raise ConfigError(f"cannot read {what} {path}: {err.strerror or err}") from err
    if not data.startswith(GZIP_MAGIC):
        return data
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as f:
            out = f.read(MAX_DATASET_BYTES + 1)
    except (OSError, EOFError, zlib.error) as err:
        raise ConfigError(f"{p.name}: not a readable gzip file ({err})") from err
    if len(out) > MAX_DATASET_BYTES:
        raise ConfigError(f"{p.name}: more than {MAX_DATASET_BYTES} bytes once decompressed")
    return out


def load_jsonl(
    path: str | Path,
    *,
    name: str | None = None,
    row_model: type[BaseModel] = MathRow,
    to_task: RowToTask = math_row_to_task,
    strict: bool = True,
    pin: Callable[[bytes], str] | None = None,
    shape: ShapeOf | None = None,
) -> Dataset:
    """Load and validate every line (``.jsonl`` or ``.jsonl.gz``). ``strict``: ConfigError
    names the first bad line; else bad lines go to ``Dataset.errors`` and the rest load.
    ``pin``: the content hash from the file's bytes, for a format whose rows reference other
    files that the hash must cover too (default: SHA-256 of the bytes). ``shape``: decides,
    from the first row, the row model and row-to-task function of the whole file (they
    replace ``row_model`` and ``to_task``)."""
    p = Path(path)
    data = read_dataset_bytes(p)
    digest = pin(data) if pin is not None else hashlib.sha256(data).hexdigest()
    ds = Dataset(name or _stem(p), str(p), digest)
    lines = data.splitlines()
    if shape is not None:
        ds.shape = shape(_first_object(lines))
        row_model, to_task = ds.shape.row_model, ds.shape.to_task
    row = -1
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        row += 1
        try:
            _load_row(ds, p, (n, row), raw, row_model, to_task)
        except ConfigError as err:
            if strict:
                raise
            ds.errors.append(str(err))
            ds._bad.setdefault(f"{ds.pin}/{row}", str(err))
            own = _own_id(raw)
            if own is not None and own not in ds._index:
                ds._bad.setdefault(own, str(err))
    if not ds.tasks:
        first = f": {ds.errors[0]}" if ds.errors else ""
        raise ConfigError(f"dataset {path} has no rows{first}")
    return ds


def _stem(p: Path) -> str:
    """``HumanEval.jsonl.gz`` -> ``HumanEval``; ``tasks.jsonl`` -> ``tasks``."""
    name = p.name[:-3] if p.name.endswith(".gz") else p.name
    return Path(name).stem


def _first_object(lines: list[bytes]) -> dict[str, Any]:
    """The first line that is a JSON object ({} if none is: every line then fails anyway)."""
    for raw in lines:
        if not raw.strip() or len(raw) > MAX_ROW_BYTES:
            continue
        try:
            row = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            continue
        if isinstance(row, dict):
            return row
    return {}


def _own_id(raw: bytes) -> str | None:
    try:
        row = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return None
    own = row.get("task_id") if isinstance(row, dict) else None
    if isinstance(own, int) and not isinstance(own, bool):
        own = str(own)
    return own if isinstance(own, str) and own else None


def _load_row(
    ds: Dataset,
    p: Path,
    position: tuple[int, int],
    raw: bytes,
    row_model: type[BaseModel],
    to_task: RowToTask,
) -> None:
    """Validate one line (``position`` = line number, row index) and append its task."""
    n, index = position
    if len(raw) > MAX_ROW_BYTES:
        raise ConfigError(f"{p.name}:{n}: line longer than {MAX_ROW_BYTES} bytes")
    try:
        row = row_model.model_validate(json.loads(raw))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as err:
        raise ConfigError(f"{p.name}:{n}: not valid JSON ({str(err)[:200]})") from err
    except ValidationError as err:
        e = err.errors()[0]
        where = ".".join(str(x) for x in e["loc"]) or "row"
        msg = str(e["msg"]).removeprefix("Value error, ")
        raise ConfigError(f"{p.name}:{n}: {where}: {msg}") from err
    canonical = f"{ds.pin}/{index}"
    own = getattr(row, "task_id", None)
    task_id = own or canonical
    if task_id in ds._index:
        raise ConfigError(f"{p.name}:{n}: duplicate task_id {task_id!r}")
    try:
        prompt, truth = to_task(row)
    except (ValueError, KeyError, TypeError) as err:
        raise ConfigError(f"{p.name}:{n}: {err}") from err
    given = getattr(row, "split", None) or "train"
    if given not in SPLITS:
        raise ConfigError(f"{p.name}:{n}: split: must be train or heldout, not {given!r}")
    split: Literal["train", "heldout"] = "heldout" if given == "heldout" else "train"
    ds._index[task_id] = ds._index[canonical] = len(ds.tasks)
    ds.tasks.append(
        Task(
            task_id=task_id,
            family=ds.name,
            prompt=prompt,
            truth=dump_truth(truth),
            params={"row": index},
            difficulty=0,
            split="heldout" if split == "heldout" else "train",
        )
    )
