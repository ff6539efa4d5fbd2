"""Another framework's task list as a gymforge ``Dataset``, pinned by content hash.

Verifiers keeps its tasks as dataset rows and OpenEnv's Task API lists task specs per split;
either way the framework hands over a finite list. Each list becomes one ``Dataset`` whose task
ids are ``NAME@HASH/row-N`` (``HASH`` over the rows' canonical JSON, so other rows never
resolve under an old id), and a held-out list is held out whole (name it in
``Split.families``). Shared by the framework adapters (``gymforge.envs.*_adapter``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from gymforge.core.seeding import canonical_json
from gymforge.core.types import Task
from gymforge.tasks.dataset import Dataset
from gymforge.tasks.truth_dump import dump_truth


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON data (lists, dicts and scalars as they are; anything else is
    kept as its ``str``)."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def rows_dataset(
    name: str,
    source: str,
    rows: Sequence[Any],
    split: Literal["train", "heldout"],
    prompt: Callable[[Any], str],
    truth: Callable[[int, Any], BaseModel],
) -> Dataset:
    """``rows`` (made plain JSON) as a ``Dataset`` named ``name``: row ``i``'s task has
    ``prompt(row)`` and the hidden truth ``truth(i, row)``. ``source`` is where they came from
    (the dataset's ``path`` in manifests)."""
    plain = [jsonable(r) for r in rows]
    digest = hashlib.sha256()
    for row in plain:
        digest.update(canonical_json(row).encode())
        digest.update(b"\n")
    ds = Dataset(name=name, path=source, content_hash=digest.hexdigest())
    for i, row in enumerate(plain):
        task_id = f"{ds.pin}/row-{i}"
        ds._index[task_id] = len(ds.tasks)
        ds.tasks.append(
            Task(
                task_id=task_id,
                family=name,
                prompt=prompt(row),
                truth=dump_truth(truth(i, row)),
                params={"row": i},
                split=split,
            )
        )
    return ds
