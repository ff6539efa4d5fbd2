"""``ExtractFamily``: a document type with its JSON Schema, generator and field checks.

A family ``build``s a hidden ``record`` (the ground truth, valid against ``schema``) and
renders it as a document with layout, locale and distractor variations; the prompt is the
schema plus the document. ``checks(record)`` lists the ``FieldCheck``s the verifier grades
(one per scalar field, one per line-item field, a length check per list), so the score is
the weighted fraction of fields extracted right.

Shared helpers render dates and amounts per locale: ``us`` (``04/12/2023``, ``1,234.50``),
``uk`` (``12 April 2023``, ``1,234.50``) and ``de`` (``12.04.2023``, ``1.234,50``).
"""

from __future__ import annotations

import datetime as dt
import json
import random
from abc import abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from gymforge.tasks import TaskFamily
from gymforge.verify.json_schema import FieldCheck

MONTHS = tuple(dt.date(2000, m, 1).strftime("%B") for m in range(1, 13))
BASE = dt.date(2022, 1, 1)
FIRST = (
    "Amara", "Bruno", "Carla", "Dara", "Emil", "Freya", "Gustav", "Hiroshi", "Ilse", "Jamal",
    "Katja", "Luca", "Maya", "Niko", "Olga", "Pablo", "Rania", "Stefan", "Tariq", "Vera",
)  # fmt: skip
LAST = (
    "Achebe", "Berg", "Castro", "Dahl", "Engel", "Fontaine", "Gruber", "Horvat", "Iqbal",
    "Jansen", "Keller", "Lopez", "Marin", "Nowak", "Ortiz", "Pohl", "Quist", "Reyes", "Stein",
    "Torres",
)  # fmt: skip

INSTRUCTIONS = (
    "Rules: dates as YYYY-MM-DD; amounts as plain JSON numbers (no currency signs, no "
    "thousands separators); text fields copied as written; lists in document order. "
    "End your reply with the JSON in one ```json fenced block; nothing may follow it."
)


def day(r: random.Random, span: int = 700) -> dt.date:
    return BASE + dt.timedelta(days=r.randint(0, span))


def fmt_date(d: dt.date, locale: str) -> str:
    if locale == "us":
        return f"{d.month:02d}/{d.day:02d}/{d.year}"
    if locale == "uk":
        return f"{d.day} {MONTHS[d.month - 1]} {d.year}"
    return f"{d.day:02d}.{d.month:02d}.{d.year}"


def fmt_amount(x: float, locale: str) -> str:
    text = f"{x:,.2f}"
    if locale == "de":
        text = text.replace(",", "_").replace(".", ",").replace("_", ".")
    return text


def person(r: random.Random) -> str:
    return f"{r.choice(FIRST)} {r.choice(LAST)}"


def email(name: str, domain: str) -> str:
    return name.lower().replace(" ", ".") + "@" + domain


def fenced_json(record: Mapping[str, Any]) -> str:
    return "```json\n" + json.dumps(record, indent=2, ensure_ascii=False) + "\n```"


class ExtractTruth(BaseModel):
    """The hidden record (a JSON document valid against the family's ``schema``) and the
    distractors: field -> the wrong-but-plausible value the document also shows."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    record: dict[str, Any]
    distractors: dict[str, Any]


class ExtractFamily(TaskFamily[ExtractTruth]):
    """A ``TaskFamily`` plus the document type's ``schema``, ``checks`` and held-out
    regions (``heldout``: region name -> predicate over params)."""

    kind: ClassVar[str] = "document"
    schema: ClassVar[dict[str, Any]] = {}
    heldout: ClassVar[Mapping[str, Any]] = {}

    @abstractmethod
    def make(
        self, params: dict[str, Any], r: random.Random
    ) -> tuple[str, dict[str, Any], dict[str, Any]]:
        """``(document text, record, distractors)``: ``distractors`` maps a field to a
        wrong-but-plausible value the document also shows (the red team uses them)."""

    @abstractmethod
    def checks(self, record: Mapping[str, Any]) -> list[FieldCheck]:
        """The field checks for this record."""

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, ExtractTruth]:
        document, record, distractors = self.make(params, r)
        prompt = (
            f"Extract the {self.kind} below into one JSON object that validates against this "
            f"JSON Schema:\n\n{json.dumps(self.schema, indent=1)}\n\n{INSTRUCTIONS}\n\n"
            f'Document:\n"""\n{document}\n"""'
        )
        return prompt, ExtractTruth(record=record, distractors=distractors)


def item_checks(
    items: list[Mapping[str, Any]], fields: Mapping[str, FieldCheck], weight: float
) -> list[FieldCheck]:
    """Per-item checks for ``/line_items``-like lists: ``weight`` split over every item
    field, plus one length check."""
    out: list[FieldCheck] = []
    per = weight / max(1, len(items) * len(fields))
    for i in range(len(items)):
        for name, proto in fields.items():
            out.append(
                FieldCheck(
                    f"{proto.path}/{i}/{name}",
                    proto.mode,
                    abs_tol=proto.abs_tol,
                    rel_tol=proto.rel_tol,
                    weight=per,
                )
            )
    return out
