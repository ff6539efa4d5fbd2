"""A Verifiers environment's datasets as gymforge datasets (``gymforge.envs.interop_rows``).

Verifiers keeps its tasks as Hugging Face ``datasets`` rows (``prompt`` messages, ``answer``,
``info``, ``example_id``, ...): ``get_dataset()`` for training and, when the environment has
one, ``get_eval_dataset()`` for evaluation, which is held out. A row's hidden truth is the row
itself, so the rubric sees exactly what Verifiers would hand it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from gymforge.core.seeding import canonical_json
from gymforge.envs.interop_rows import rows_dataset
from gymforge.tasks.dataset import Dataset


class VfRowTruth(BaseModel):
    """One Verifiers dataset row as JSON (what its rubric scores against)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    row: dict[str, Any]


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
    """Verifiers ``rows`` as the gymforge ``Dataset`` ``name``."""
    return rows_dataset(
        name,
        f"verifiers:{name}",
        [dict(r) for r in rows],
        split,
        prompt_text,
        lambda i, row: VfRowTruth(row=row),
    )
