"""A Verifiers environment's datasets as gymforge datasets, pinned by content hash.

Verifiers keeps its tasks as Hugging Face ``datasets`` rows (``prompt`` messages, ``answer``,
``info``, ``example_id``, ...): ``get_dataset()`` for training and, when the environment has
one, ``get_eval_dataset()`` for evaluation. Each becomes one gymforge ``Dataset`` whose task
ids are ``NAME@HASH/row-N``; the eval rows are the held-out split (the whole dataset is named
in ``Split.families``). A row's hidden truth is the row itself, so the rubric sees exactly
what Verifiers would hand it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from gymforge.core.seeding import canonical_json
from gymforge.core.types import Task
from gymforge.tasks.dataset import Dataset
from gymforge.tasks.truth import dump_truth


class VfRowTruth(BaseModel):
    """One Verifiers dataset row as JSON (what its rubric scores against)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    row: dict[str, Any]


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON data (``datasets`` hands back lists, dicts and scalars; anything
    else is kept as its ``str``)."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def prompt_text(row: Mapping[str, Any]) -> str:
    """The row's last user message (or its ``question``): the task's readable prompt."""
    prompt = row.get("prompt")
    if isinstance(prompt, list):
        users = [
            m.get("content") for m in prompt if isinstance(m, dict) and m.get("role") == "user"
        ]
        if users and isinstance(users[-1], str):
            return users[-1]
    question = row.get("question")
    return question if isinstance(question, str) else canonical_json(prompt)


def as_dataset(
    name: str, rows: Iterable[Mapping[str, Any]], split: Literal["train", "heldout"]
) -> Dataset:
    """``rows`` as a gymforge ``Dataset`` named ``name``, hashed over the rows' canonical JSON."""
    plain = [jsonable(dict(r)) for r in rows]
    digest = hashlib.sha256()
    for row in plain:
        digest.update(canonical_json(row).encode())
        digest.update(b"\n")
    ds = Dataset(name=name, path=f"verifiers:{name}", content_hash=digest.hexdigest())
    for i, row in enumerate(plain):
        task_id = f"{ds.pin}/row-{i}"
        ds._index[task_id] = len(ds.tasks)
        ds.tasks.append(
            Task(
                task_id=task_id,
                family=name,
                prompt=prompt_text(row),
                truth=dump_truth(VfRowTruth(row=row)),
                params={"row": i},
                split=split,
            )
        )
    return ds
