"""Expense batches: employees, a rate table, policy limits and N reports, seeded.

Reports mix the outcomes the policy distinguishes: plain approvals, foreign currencies
(which change both the approved amount and which limit bites), missing receipts above and
below the threshold, over-limit amounts, exact duplicates of earlier reports and
near-duplicates (same merchant, another date or amount) that must not be mistaken for them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from gymforge.envs.expenses.policy import CATEGORIES, decide
from gymforge.envs.expenses.truth import ExpenseTruth
from gymforge.tasks import ChoiceKnob, IntKnob, ParamSpace, Split
from gymforge.tasks.family import Knob
from gymforge.tasks.trusted import trusted
from gymforge.world.clock import epoch, iso
from gymforge.world.render import page_of
from gymforge.world.tasks import WorldFamily

NAMES = ["Ana", "Ben", "Chen", "Dara", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lea"]
DEPTS = ["sales", "support", "research", "finance"]
MERCHANTS = {
    "meals": ["Cafe Lumen", "Noodle Bar", "Green Fork", "Bistro 9", "Deli Row"],
    "lodging": ["Harbor Hotel", "Inn Central", "Stay Suites", "Parkview Lodge"],
    "travel": ["SkyLine Air", "RailOne", "MetroCab", "Coastal Ferries"],
    "supplies": ["PaperWorks", "Office Depot", "Tech Cart", "Print Hub"],
}
LIMITS = {"meals": (60, 90), "lodging": (180, 260), "travel": (600, 900), "supplies": (80, 150)}
RATES = {"EUR": (1.05, 1.12), "GBP": (1.22, 1.32), "CAD": (0.70, 0.76), "CHF": (1.08, 1.16)}
MIXES = {
    "domestic": {"USD": 8, "EUR": 1, "CAD": 1},
    "mixed": {"USD": 4, "EUR": 2, "GBP": 2, "CAD": 1, "CHF": 1},
    "eu": {"USD": 1, "EUR": 4, "GBP": 3, "CHF": 2},
}


@dataclass(frozen=True)
class Mix:
    """What a family's batches are made of."""

    duplicates: float = 0.08
    over_limit: float = 0.15
    categories: tuple[int, ...] = (1, 1, 1, 1)


@dataclass
class BatchFamily(WorldFamily[ExpenseTruth]):
    mix: Mix = Mix()

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, ExpenseTruth]:
        return build_batch(params, r, self.mix)


def _amount(category: str, limit: int, r: random.Random, over: bool) -> int:
    lo = 5_00 if category in ("meals", "supplies") else 40_00
    if over:
        return r.randrange(limit + 1_00, limit * 2)
    return r.randrange(lo, max(lo + 1, int(limit * 0.97)))


def build_batch(params: dict[str, Any], r: random.Random, shape: Mix) -> tuple[str, ExpenseTruth]:
    now = epoch("2024-01-15") + r.randrange(0, 320) * 86_400 + 9 * 3600
    as_of = iso(now - 86_400)[:10]
    limits = {c: r.randrange(lo, hi + 1) * 100 for c, (lo, hi) in LIMITS.items()}
    threshold = r.randrange(25, 41) * 100
    rates = {"USD": 1_000_000} | {
        c: int(r.uniform(lo, hi) * 1_000_000) for c, (lo, hi) in RATES.items()
    }
    employees = [
        {
            "id": f"E-{100 + i}",
            "name": f"{n} {r.choice('BCDFGHKLMNPRST')}.",
            "department": r.choice(DEPTS),
        }
        for i, n in enumerate(r.sample(NAMES, r.randrange(6, 11)))
    ]
    mix = MIXES[params["currency_mix"]]
    batch_id = f"B-{r.randrange(1000, 9999)}"
    base = r.randrange(10_000, 60_000)
    reports: list[dict[str, Any]] = []
    for seq in range(1, params["reports"] + 1):
        if reports and r.random() < shape.duplicates:
            src = r.choice(reports)
            rep = dict(src)
            if r.random() < 0.35:  # a near-duplicate: another day, so not a duplicate
                rep["expense_date"] = iso(epoch(src["expense_date"]) + r.choice((-1, 1)) * 86_400)[
                    :10
                ]
            rep["has_receipt"] = int(r.random() < 0.9)
        else:
            category = r.choices(CATEGORIES, weights=shape.categories)[0]
            currency = r.choices(list(mix), weights=list(mix.values()))[0]
            limit_local = limits[category] * 1_000_000 // rates[currency]
            rep = {
                "employee_id": r.choice(employees)["id"],
                "category": category,
                "merchant": r.choice(MERCHANTS[category]),
                "expense_date": iso(now - r.randrange(3, 40) * 86_400)[:10],
                "amount_cents": _amount(
                    category, limit_local, r, over=r.random() < shape.over_limit
                ),
                "currency": currency,
                "has_receipt": int(r.random() < 0.85),
            }
            if r.random() < 0.1:  # a small amount without a receipt: below the threshold
                rep["amount_cents"] = r.randrange(
                    3_00, max(4_00, threshold * 1_000_000 // rates[currency] - 50)
                )
                rep["has_receipt"] = 0
        rep.update(
            id=f"R-{base + seq * 7}",
            batch_id=batch_id,
            seq=seq,
            status="pending",
            reason_code=None,
            approved_usd_cents=None,
            decided_at=None,
        )
        reports.append(rep)
    truth_decisions = decide(reports, rates, limits, threshold)
    world: dict[str, list[dict[str, Any]]] = {
        "employees": employees,
        "policy": [{"key": f"limit.{c}", "value_cents": v} for c, v in limits.items()]
        + [{"key": "receipt_threshold", "value_cents": threshold}],
        "rates": [{"currency": c, "usd_micros": v, "as_of": as_of} for c, v in rates.items()],
        "batches": [
            {"id": batch_id, "status": "open", "report_count": len(reports), "submitted_at": None}
        ],
        "reports": reports,
    }
    n = len(reports)
    prompt = (
        f"Batch {batch_id} has {n} pending expense reports. Decide each one under the expense "
        "policy, then submit the batch."
    )
    # trusted: every value is one this function (and ``decide``) made, of its declared type,
    # each decision in its TypedDict's key order (tests/tasks/test_trusted_truth.py
    # validates every one)
    truth = trusted(
        ExpenseTruth,
        world=world,
        now=iso(now),
        batch_id=batch_id,
        decisions=truth_decisions,
        order=[rep["id"] for rep in reports],
        employees={rep["id"]: rep["employee_id"] for rep in reports},
        pages=page_of(n - 1, params["page_size"]),
        page_size=params["page_size"],
    )
    return prompt, truth


LEVELS: dict[int, dict[str, Knob]] = {
    1: {
        "reports": IntKnob(30, 34),
        "page_size": ChoiceKnob((10,)),
        "fault_rate": ChoiceKnob((0.0,)),
    },
    2: {
        "reports": IntKnob(36, 44),
        "page_size": ChoiceKnob((8,)),
        "fault_rate": ChoiceKnob((0.03,)),
    },
    3: {
        "reports": IntKnob(48, 60),
        "page_size": ChoiceKnob((6,)),
        "fault_rate": ChoiceKnob((0.06,)),
    },
}
MIX = ChoiceKnob(("domestic", "mixed", "eu"))


def _levels(offset: int = 0) -> dict[int, ParamSpace]:
    return {d + offset: ParamSpace({**k, "currency_mix": MIX}) for d, k in LEVELS.items()}


FAMILIES = [
    BatchFamily("expenses.batch", 1, _levels(), Mix()),
    # trips: lodging and travel, more of them over the limit
    BatchFamily("expenses.travel", 1, _levels(), Mix(0.05, 0.25, (1, 3, 3, 1))),
    # re-submitted batches, full of copies; held out whole, rated above every other batch
    BatchFamily("expenses.audit", 1, _levels(offset=3), Mix(0.3, 0.1)),
]
HELD_OUT_FAMILY = "expenses.audit"
SPLIT = Split(
    families=frozenset({HELD_OUT_FAMILY}),
    regions={f.name: {"eu_currencies": lambda p: p["currency_mix"] == "eu"} for f in FAMILIES},
)
TRAIN_FAMILIES = tuple(f.name for f in FAMILIES if f.name != HELD_OUT_FAMILY)
