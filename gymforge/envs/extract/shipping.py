"""Shipping notices (held out whole): tracking number, carrier, date, weight, destination,
package count and SKUs.

Knobs: ``skus`` (how many), ``layout`` (``kv`` or ``prose``), ``distractors`` (1: the
sender's city; 2: also a volumetric weight and a return-label tracking number; 3: also a
backordered SKU that is *not* in the parcel) and ``grams`` (weight printed in grams rather
than kilograms). Its levels are 4-6, so that no training family's level is held out.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Mapping
from typing import Any

from gymforge.envs.extract.base import ExtractFamily, day, fmt_date
from gymforge.tasks import ChoiceKnob, IntKnob, ParamSpace
from gymforge.verify.json_schema import FieldCheck

CARRIERS = ("DHL", "UPS", "FedEx", "PostNL", "GLS")
CITIES = ("Lisbon", "Vienna", "Gdansk", "Bilbao", "Tampere", "Ghent", "Bologna", "Aarhus")
SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "required": [
        "tracking_number", "carrier", "ship_date", "weight_kg", "destination_city",
        "package_count", "skus",
    ],
    "properties": {
        "tracking_number": {"type": "string", "pattern": r"^[A-Z0-9]{10,20}$"},
        "carrier": {"enum": list(CARRIERS)},
        "ship_date": {"type": "string", "format": "date", "pattern": r"^\d{4}-\d{2}-\d{2}$"},
        "weight_kg": {"type": "number", "exclusiveMinimum": 0},
        "destination_city": {"type": "string", "minLength": 1, "maxLength": 60},
        "package_count": {"type": "integer", "minimum": 1},
        "skus": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
    },
}  # fmt: skip


def _tracking(r: random.Random) -> str:
    return "".join(r.choice("ABCDEFGHJKLMNPRSTUVWXYZ0123456789") for _ in range(14))


class ShippingFamily(ExtractFamily):
    kind = "shipping notice"
    schema = SCHEMA

    def make(
        self, params: dict[str, Any], r: random.Random
    ) -> tuple[str, dict[str, Any], dict[str, Any]]:
        dis = params["distractors"]
        origin, dest = r.sample(CITIES, 2)
        grams = r.randint(200, 25_000)
        skus = sorted({f"SKU-{r.randint(1000, 9999)}" for _ in range(params["skus"])})
        record: dict[str, Any] = {
            "tracking_number": _tracking(r),
            "carrier": r.choice(CARRIERS),
            "ship_date": day(r).isoformat(),
            "weight_kg": grams / 1000,
            "destination_city": dest,
            "package_count": r.randint(1, 4),
            "skus": skus,
        }
        volumetric = round(grams / 1000 * r.uniform(1.2, 2.0), 1)
        return_label = _tracking(r)
        backordered = f"SKU-{r.randint(1000, 9999)}"
        distractors: dict[str, Any] = {}
        if dis >= 1:
            distractors["destination_city"] = origin
        if dis >= 2:
            distractors |= {"weight_kg": volumetric, "tracking_number": return_label}
        if dis >= 3 and backordered not in skus:
            distractors["skus"] = sorted([*skus, backordered])
        weight = f"{grams} g" if params["grams"] else f"{grams / 1000:g} kg"
        shipped = fmt_date(dt.date.fromisoformat(record["ship_date"]), "uk")
        lines = [
            f"Carrier: {record['carrier']}",
            f"Tracking number: {record['tracking_number']}",
            f"Shipped on: {shipped}",
            f"Deliver to: {dest}",
            f"Parcels: {record['package_count']}",
            f"Actual weight: {weight}",
            f"Contents: {', '.join(skus)}",
        ]
        if dis >= 1:
            lines.insert(3, f"Sender: warehouse in {origin}")
        if dis >= 2:
            lines += [
                f"Volumetric weight (billing only): {volumetric} kg",
                f"Return label tracking (do not use for this parcel): {return_label}",
            ]
        if dis >= 3 and backordered not in skus:
            lines.append(f"Backordered, ships separately: {backordered}")
        if params["layout"] == "prose":
            text = (
                "Good news! Your order is on its way. " + ". ".join(lines) + ".\n"
                "Questions? Reply to this message."
            )
        else:
            text = "SHIPPING NOTICE\n" + "\n".join(lines)
        return text, record, distractors

    def checks(self, record: Mapping[str, Any]) -> list[FieldCheck]:
        return [
            FieldCheck("/tracking_number", "exact"),
            FieldCheck("/carrier", "exact"),
            FieldCheck("/ship_date", "exact"),
            FieldCheck("/weight_kg", "number", abs_tol=0.0005),
            FieldCheck("/destination_city", "text"),
            FieldCheck("/package_count", "number"),
            FieldCheck("/skus", "set", weight=2.0),
        ]


def _level(skus: tuple[int, int], layouts: tuple[str, ...], dis: tuple[int, int]) -> ParamSpace:
    return ParamSpace(
        {
            "skus": IntKnob(*skus),
            "layout": ChoiceKnob(layouts),
            "distractors": IntKnob(*dis),
            "grams": ChoiceKnob((0, 1)),
        }
    )


FAMILY = ShippingFamily(
    "extract.shipping",
    1,
    {
        4: _level((1, 2), ("kv",), (0, 0)),
        5: _level((2, 3), ("kv", "prose"), (1, 2)),
        6: _level((3, 5), ("prose",), (3, 3)),
    },
)
