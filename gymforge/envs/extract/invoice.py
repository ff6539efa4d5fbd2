"""Invoices: number, issue date, parties, currency, line items and the amount payable.

Knobs: ``items`` (line items), ``layout`` (``kv`` key-value block, ``table`` an ASCII
table, ``prose`` a covering email), ``distractors`` (0: none; 1: subtotal and VAT lines,
the total being subtotal plus VAT; 2: also a due date and a purchase-order number; 3: also
a reference to an earlier invoice) and ``locale`` (``us``, ``uk``, ``de``; date and number
formats and currency). Held-out region: every ``de`` invoice (comma decimals, dotted dates).
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Mapping
from typing import Any

from gymforge.envs.extract.base import (
    ExtractFamily,
    day,
    fmt_amount,
    fmt_date,
    item_checks,
    person,
)
from gymforge.tasks import ChoiceKnob, IntKnob, ParamSpace
from gymforge.verify.json_schema import FieldCheck

CURRENCY = {"us": ("USD", "$"), "uk": ("GBP", "£"), "de": ("EUR", "€")}
VENDORS = (
    "Northwind Supplies", "Harbor Office Co.", "Keller & Sohn GmbH", "Lumen Parts Ltd",
    "Blue Anchor Trading", "Oakridge Tools", "Fjord Paper AB", "Solis Electric",
)  # fmt: skip
GOODS = (
    "A4 copy paper (box)", "Desk lamp", "USB-C cable 2 m", "Stapler", "Whiteboard markers",
    "Ergonomic chair", "Monitor arm", "Label printer", "Shipping boxes (10)", "Toner cartridge",
    "Wireless mouse", "Filing cabinet",
)  # fmt: skip
MONEY = {"type": "number", "minimum": 0}
SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "required": [
        "invoice_number", "issue_date", "vendor", "customer", "currency", "line_items", "total"
    ],
    "properties": {
        "invoice_number": {"type": "string", "minLength": 1, "maxLength": 40},
        "issue_date": {"type": "string", "format": "date", "pattern": r"^\d{4}-\d{2}-\d{2}$"},
        "vendor": {"type": "string", "minLength": 1, "maxLength": 100},
        "customer": {"type": "string", "minLength": 1, "maxLength": 100},
        "currency": {"enum": ["USD", "GBP", "EUR", "CHF"]},
        "line_items": {
            "type": "array",
            "minItems": 1,
            "maxItems": 20,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["description", "quantity", "unit_price"],
                "properties": {
                    "description": {"type": "string", "minLength": 1, "maxLength": 100},
                    "quantity": {"type": "integer", "minimum": 1},
                    "unit_price": MONEY,
                },
            },
        },
        "total": MONEY,
    },
}  # fmt: skip


def _number(r: random.Random, year: int) -> str:
    return f"INV-{year}-{r.randint(100, 9999):04d}"


class InvoiceFamily(ExtractFamily):
    kind = "invoice"
    schema = SCHEMA
    heldout = {"de_locale": lambda p: p["locale"] == "de"}

    def make(
        self, params: dict[str, Any], r: random.Random
    ) -> tuple[str, dict[str, Any], dict[str, Any]]:
        loc, dis = params["locale"], params["distractors"]
        code, sign = CURRENCY[loc]
        issued = day(r)
        items: list[dict[str, Any]] = [
            {
                "description": g,
                "quantity": r.randint(1, 12),
                "unit_price": round(r.uniform(1.5, 480.0), 2),
            }
            for g in r.sample(GOODS, params["items"])
        ]
        subtotal = round(sum(i["quantity"] * i["unit_price"] for i in items), 2)
        vat_rate = r.choice((5, 10, 19, 20)) if dis >= 1 else 0
        vat = round(subtotal * vat_rate / 100, 2)
        record: dict[str, Any] = {
            "invoice_number": _number(r, issued.year),
            "issue_date": issued.isoformat(),
            "vendor": r.choice(VENDORS),
            "customer": person(r),
            "currency": code,
            "line_items": items,
            "total": round(subtotal + vat, 2),
        }
        due = issued + dt.timedelta(days=r.choice((14, 30, 45)))
        po = f"PO-{r.randint(10000, 99999)}"
        earlier = _number(r, issued.year - 1)
        distractors: dict[str, Any] = {"total": subtotal} if dis >= 1 else {}
        if dis >= 2:
            distractors |= {"issue_date": due.isoformat(), "invoice_number": po}
        if dis >= 3:
            distractors["invoice_number"] = earlier

        def money(x: float) -> str:
            return f"{fmt_amount(x, loc)} {sign}" if loc == "de" else f"{sign}{fmt_amount(x, loc)}"

        head = [
            f"From: {record['vendor']}",
            f"Bill to: {record['customer']}",
            f"Invoice no.: {record['invoice_number']}",
            f"Invoice date: {fmt_date(issued, loc)}",
        ]
        if dis >= 2:
            head += [f"Due date: {fmt_date(due, loc)}", f"Your purchase order: {po}"]
        if dis >= 3:
            head.append(f"This invoice replaces invoice {earlier}, which is void.")
        sums = [f"Subtotal: {money(subtotal)}", f"VAT {vat_rate}%: {money(vat)}"] if dis else []
        sums.append(f"Total due ({code}): {money(record['total'])}")
        layout = params["layout"]
        if layout == "prose":
            lines = "; ".join(
                f"{i['quantity']} x {i['description']} at {money(i['unit_price'])} each"
                for i in items
            )
            body = (
                f"Dear {record['customer']},\n\nplease find below invoice "
                f"{record['invoice_number']} dated {fmt_date(issued, loc)} from {record['vendor']} "
                f"for: {lines}.\n"
                + "\n".join(h for h in head[4:])
                + "\n"
                + "\n".join(sums)
                + f"\n\nKind regards,\n{record['vendor']} accounts team"
            )
            return body, record, distractors
        if layout == "table":
            rows = [f"| {'Description':<22} | {'Qty':>3} | {'Unit price':>12} |"]
            rows += [
                f"| {i['description']:<22} | {i['quantity']:>3} | {money(i['unit_price']):>12} |"
                for i in items
            ]
        else:
            rows = [
                f"- {i['description']}: {i['quantity']} @ {money(i['unit_price'])}" for i in items
            ]
        text = (
            "INVOICE\n"
            + "\n".join(head)
            + "\n\nItems:\n"
            + "\n".join(rows)
            + "\n\n"
            + "\n".join(sums)
        )
        return text, record, distractors

    def checks(self, record: Mapping[str, Any]) -> list[FieldCheck]:
        out = [
            FieldCheck("/invoice_number", "text"),
            FieldCheck("/issue_date", "exact"),
            FieldCheck("/vendor", "text"),
            FieldCheck("/customer", "text"),
            FieldCheck("/currency", "exact"),
            FieldCheck("/total", "number", abs_tol=0.005),
            FieldCheck("/line_items", "length"),
        ]
        fields = {
            "description": FieldCheck("/line_items", "text"),
            "quantity": FieldCheck("/line_items", "number"),
            "unit_price": FieldCheck("/line_items", "number", abs_tol=0.005),
        }
        return out + item_checks(record["line_items"], fields, weight=3.0)


def _level(
    items: tuple[int, int], layouts: tuple[str, ...], dis: tuple[int, int], locales: tuple[str, ...]
) -> ParamSpace:
    return ParamSpace(
        {
            "items": IntKnob(*items),
            "layout": ChoiceKnob(layouts),
            "distractors": IntKnob(*dis),
            "locale": ChoiceKnob(locales),
        }
    )


FAMILY = InvoiceFamily(
    "extract.invoice",
    1,
    {
        1: _level((1, 2), ("kv",), (0, 0), ("us", "uk")),
        2: _level((2, 4), ("kv", "table"), (1, 2), ("us", "uk", "de")),
        3: _level((5, 8), ("table", "prose"), (2, 3), ("us", "uk", "de")),
    },
)
