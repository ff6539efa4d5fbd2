"""The hidden truth of a research task: the question's planted answer and its evidence.

The corpus itself is not in the truth (it is shared by every task over it and rebuilt from
``corpus``, its ``size x index`` key); ``world`` stays empty.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from gymforge.tasks.truth import TruthCodec
from gymforge.world.env import WorldTruth

Unit = Literal["usd_million", "count", "usd", ""]


class Evidence(BaseModel):
    """One fact the answer rests on. A citation supports it when its ``doc_id`` is one of
    ``alternatives``' documents and its quote contains that alternative's phrase.
    ``doc``/``quote`` is the oracle's citation, ``query`` the oracle's search for it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    alternatives: list[tuple[str, str]]
    doc: str
    quote: str
    query: str


class Decoy(BaseModel):
    """A contradicted statement of the asked fact (a blog's estimate, a reseller's old
    price, a superseded appointment): its answer text and its (verbatim) citation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    answer: str
    doc: str
    quote: str


class ResearchTruth(WorldTruth):
    """``kind``: a ``number`` (``value`` in ``unit``, within ``tolerance`` relative), an
    ``entity`` (``entity``, one of ``candidates``) or ``none`` (not answerable).
    ``answer`` is the oracle's answer text."""

    corpus: str
    kind: Literal["number", "entity", "none"]
    answer: str
    value: float | None = None
    unit: Unit = ""
    tolerance: float = 0.005
    entity: str | None = None
    candidates: list[str] = []
    evidence: list[Evidence] = []
    decoy: Decoy | None = None


task_truth = TruthCodec(ResearchTruth).parse
"""A task's truth as a ``ResearchTruth`` (for policies and attacks, which see the task)."""
