"""Support-desk scenario families, their difficulty knobs and the held-out split.

Knobs shared by every family: ``distractors`` (other customers, extra months of history,
a second add-on purchase), ``page_size`` of payment lists, ``fault_rate`` (read timeouts
and empty results, rate limits, timeouts after commit) and the customer's ``region``.
Held out: the whole ``support.multi_issue`` family (several issues in one case), and the
``apac`` region of every family. Multi-issue cases are rated above every single-issue
case: their levels are 4-6 (the knobs of levels 1-3, plus two or three issues).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gymforge.envs.support_desk.scenarios import build_scenario
from gymforge.envs.support_desk.truth import DeskTruth
from gymforge.tasks import ChoiceKnob, IntKnob, ParamSpace, Split
from gymforge.tasks.family import Knob
from gymforge.world.tasks import WorldFamily

Pick = Callable[[dict[str, Any], random.Random], tuple[list[str], bool, str | None]]

LEVELS: dict[int, dict[str, Knob]] = {
    1: {
        "distractors": IntKnob(0, 1),
        "page_size": ChoiceKnob((8,)),
        "fault_rate": ChoiceKnob((0.0,)),
    },
    2: {
        "distractors": IntKnob(2, 4),
        "page_size": ChoiceKnob((5,)),
        "fault_rate": ChoiceKnob((0.05,)),
    },
    3: {
        "distractors": IntKnob(5, 8),
        "page_size": ChoiceKnob((3,)),
        "fault_rate": ChoiceKnob((0.1,)),
    },
}
REGIONS = ChoiceKnob(("na", "eu", "apac"))


def _levels(extra: dict[str, Knob], offset: int = 0) -> dict[int, ParamSpace]:
    return {
        d + offset: ParamSpace({**knobs, "region": REGIONS, **extra}) for d, knobs in LEVELS.items()
    }


@dataclass
class DeskFamily(WorldFamily[DeskTruth]):
    """A family is a way of picking the customer's issues; ``outage`` forces tool faults."""

    pick: Pick = field(default=lambda p, r: (["duplicate"], False, None))
    outage: bool = False

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, DeskTruth]:
        kinds, fraud, wrong = self.pick(params, r)
        return build_scenario(kinds, params, r, fraud=fraud, wrong=wrong, outage=self.outage)


def _multi(p: dict[str, Any], r: random.Random) -> tuple[list[str], bool, str | None]:
    pool = ["duplicate", "refund", r.choice(["goodwill", "over_limit"])]
    return r.sample(pool, p["n_issues"]), False, None


def _family(
    name: str, extra: dict[str, Knob], pick: Pick, outage: bool = False, offset: int = 0
) -> DeskFamily:
    return DeskFamily(f"support.{name}", 1, _levels(extra, offset), pick, outage)


ISSUE = ChoiceKnob(("duplicate", "refund", "goodwill"))
FAMILIES = [
    _family("duplicate_charge", {}, lambda p, r: (["duplicate"], False, None)),
    _family(
        "refund_window", {"inside": ChoiceKnob((0, 1))}, lambda p, r: (["refund"], False, None)
    ),
    _family("goodwill", {"recent": ChoiceKnob((0, 1))}, lambda p, r: (["goodwill"], False, None)),
    _family("over_limit", {}, lambda p, r: (["over_limit"], False, None)),
    _family("fraud_hold", {"issue": ISSUE}, lambda p, r: ([p["issue"]], True, None)),
    _family(
        "wrong_identity",
        {"issue": ISSUE, "wrong": ChoiceKnob(("zip", "email"))},
        lambda p, r: ([p["issue"]], False, p["wrong"]),
    ),
    _family(
        "tool_outage",
        {"issue": ISSUE},
        lambda p, r: ([p["issue"]], False, None),
        outage=True,
    ),
    _family(
        "multi_issue",
        {"n_issues": IntKnob(2, 3), "inside": ChoiceKnob((0, 1)), "recent": ChoiceKnob((0, 1))},
        _multi,
        offset=3,
    ),
]
HELD_OUT_FAMILY = "support.multi_issue"
SPLIT = Split(
    families=frozenset({HELD_OUT_FAMILY}),
    regions={f.name: {"apac": lambda p: p["region"] == "apac"} for f in FAMILIES},
)
TRAIN_FAMILIES = tuple(f.name for f in FAMILIES if f.name != HELD_OUT_FAMILY)
