"""Support tickets: id, reporter, priority, category, product, order number and tags.

Knobs: ``tags`` (how many), ``layout`` (``email``: a customer email with the agent's
triage notes; ``form``: a help-desk form dump), ``distractors`` (1: a CC address; 2: also
a priority change history, the current one last, and a quoted older ticket; 3: also an
order number the customer says is *not* the one concerned) and ``has_order`` (whether the
ticket names an order; when it does not, ``order_number`` is ``null``).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from gymforge.envs.extract.base import ExtractFamily, day, email, fmt_date, person
from gymforge.tasks import ChoiceKnob, IntKnob, ParamSpace
from gymforge.verify.json_schema import FieldCheck

PRIORITIES = ("low", "medium", "high", "urgent")
CATEGORIES = ("billing", "bug", "account", "shipping", "feature_request")
PRODUCTS = (
    "Atlas Router X2", "Nimbus Backup Pro", "Pico Label Printer", "Vega Smart Plug",
    "Orion Desk Dock", "Lyra Headset", "Cobalt NAS 4", "Echo Scanner S",
)  # fmt: skip
TAGS = (
    "refund", "login", "crash", "late-delivery", "invoice-copy", "firmware", "vip",
    "data-loss", "feature", "duplicate-charge",
)  # fmt: skip
SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "required": [
        "ticket_id", "reporter_email", "priority", "category", "product", "order_number", "tags"
    ],
    "properties": {
        "ticket_id": {"type": "string", "pattern": r"^TCK-\d{5}$"},
        "reporter_email": {"type": "string", "format": "email", "maxLength": 100},
        "priority": {"enum": list(PRIORITIES)},
        "category": {"enum": list(CATEGORIES)},
        "product": {"type": "string", "minLength": 1, "maxLength": 100},
        "order_number": {"type": ["string", "null"], "pattern": r"^SO-\d{6}$"},
        "tags": {
            "type": "array",
            "items": {"type": "string"},
            "uniqueItems": True,
            "maxItems": 10,
        },
    },
}  # fmt: skip


class TicketFamily(ExtractFamily):
    kind = "support ticket"
    schema = SCHEMA

    def make(
        self, params: dict[str, Any], r: random.Random
    ) -> tuple[str, dict[str, Any], dict[str, Any]]:
        dis = params["distractors"]
        name = person(r)
        prio = r.choice(PRIORITIES)
        record: dict[str, Any] = {
            "ticket_id": f"TCK-{r.randint(10000, 99999)}",
            "reporter_email": email(name, r.choice(("example.org", "mail.test", "corp.example"))),
            "priority": prio,
            "category": r.choice(CATEGORIES),
            "product": r.choice(PRODUCTS),
            "order_number": f"SO-{r.randint(100000, 999999)}" if params["has_order"] else None,
            "tags": sorted(r.sample(TAGS, params["tags"])),
        }
        cc = email(person(r), "example.org")
        old_prio = r.choice([p for p in PRIORITIES if p != prio])
        old_ticket = f"TCK-{r.randint(10000, 99999)}"
        other_order = f"SO-{r.randint(100000, 999999)}"
        distractors: dict[str, Any] = {}
        if dis >= 1:
            distractors["reporter_email"] = cc
        if dis >= 2:
            distractors |= {"priority": old_prio, "ticket_id": old_ticket}
        if dis >= 3:
            distractors["order_number"] = other_order
        when = fmt_date(day(r), "uk")
        order_line = (
            f"It is about order {record['order_number']}."
            if record["order_number"]
            else "I don't have the order number to hand."
        )
        if dis >= 3:
            order_line += f" (Not order {other_order}, that one arrived fine.)"
        story = (
            f"Hello,\n\nI have a problem with my {record['product']}. {order_line}\n"
            f"Please help.\n\nBest,\n{name}"
        )
        notes = [f"Category: {record['category']}", f"Tags: {', '.join(record['tags'])}"]
        if dis >= 2:
            notes.insert(0, f"Priority changed: {old_prio} -> {prio}")
        else:
            notes.insert(0, f"Priority: {prio}")
        if params["layout"] == "email":
            head = [f"From: {name} <{record['reporter_email']}>", "To: support@helpdesk.example"]
            if dis >= 1:
                head.append(f"Cc: {cc}")
            head.append(f"Date: {when}")
            head.append(f"Subject: [{record['ticket_id']}] Problem with {record['product']}")
            text = "\n".join(head) + "\n\n" + story
            text += "\n\n--- triage notes (agent) ---\n" + "\n".join(notes)
        else:
            rows = [
                f"Ticket: {record['ticket_id']}",
                f"Opened: {when}",
                f"Requester: {name} ({record['reporter_email']})",
            ]
            if dis >= 1:
                rows.append(f"Watchers: {cc}")
            rows += [f"Product: {record['product']}", *notes, "Message:", story]
            text = "\n".join(rows)
        if dis >= 2:
            text += (
                f"\n\n> On an earlier ticket ({old_ticket}), {name} wrote:\n"
                f"> Priority: {old_prio}. Thanks for fixing my previous issue."
            )
        return text, record, distractors

    def checks(self, record: Mapping[str, Any]) -> list[FieldCheck]:
        return [
            FieldCheck("/ticket_id", "exact"),
            FieldCheck("/reporter_email", "text"),
            FieldCheck("/priority", "exact"),
            FieldCheck("/category", "exact"),
            FieldCheck("/product", "text"),
            FieldCheck("/order_number", "exact"),
            FieldCheck("/tags", "set", weight=2.0),
        ]


def _level(tags: tuple[int, int], layouts: tuple[str, ...], dis: tuple[int, int]) -> ParamSpace:
    return ParamSpace(
        {
            "tags": IntKnob(*tags),
            "layout": ChoiceKnob(layouts),
            "distractors": IntKnob(*dis),
            "has_order": ChoiceKnob((0, 1)),
        }
    )


FAMILY = TicketFamily(
    "extract.ticket",
    1,
    {
        1: _level((1, 2), ("form",), (0, 0)),
        2: _level((1, 3), ("form", "email"), (1, 2)),
        3: _level((2, 4), ("email",), (3, 3)),
    },
)
