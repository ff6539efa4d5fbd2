"""CRM task families, their difficulty knobs and the held-out split.

Knobs shared by every family: ``distractors`` (more accounts, a third of them another
team's), ``page_size`` of search results, ``fault_rate`` (read timeouts, stale reads,
permission errors, rate limits, timeouts after commit) and ``team`` (whom the agent acts
for). Families that can be asked vaguely have ``ambiguous`` (0 or 1): the request names a
record two records fit, or leaves out a value, and only asking the requester settles it.
Held out: the whole ``crm.close_deal`` family (a multi-step walk to a closed stage), rated
above every other family (levels 4-6).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from gymforge.envs.crm.scenarios import BUILDERS, Plan
from gymforge.envs.crm.seed import TEAMS, SeedWorld
from gymforge.envs.crm.truth import CrmTruth
from gymforge.tasks import ChoiceKnob, IntKnob, ParamSpace, Split
from gymforge.tasks.family import Knob
from gymforge.world.clock import epoch, iso
from gymforge.world.tasks import WorldFamily

LEVELS: dict[int, dict[str, Knob]] = {
    1: {
        "distractors": IntKnob(1, 2),
        "page_size": ChoiceKnob((10,)),
        "fault_rate": ChoiceKnob((0.0,)),
    },
    2: {
        "distractors": IntKnob(3, 5),
        "page_size": ChoiceKnob((5,)),
        "fault_rate": ChoiceKnob((0.05,)),
    },
    3: {
        "distractors": IntKnob(6, 9),
        "page_size": ChoiceKnob((3,)),
        "fault_rate": ChoiceKnob((0.1,)),
    },
}
TEAM = ChoiceKnob(tuple(TEAMS))
AMBIGUOUS = ChoiceKnob((0, 1))


def _levels(extra: dict[str, Knob], offset: int = 0) -> dict[int, ParamSpace]:
    return {d + offset: ParamSpace({**k, "team": TEAM, **extra}) for d, k in LEVELS.items()}


@dataclass
class CrmFamily(WorldFamily[CrmTruth]):
    """A family is one kind of request (``kind`` names its builder in ``scenarios``)."""

    kind: str = "update_contact"

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, CrmTruth]:
        now = epoch("2024-02-01") + r.randrange(0, 300) * 86_400 + 9 * 3600
        w = SeedWorld(r, params["team"], now)
        p = Plan(w)
        BUILDERS[self.kind](p, params, r)
        p.read_back()
        w.distractors(params["distractors"])
        truth = CrmTruth(
            world=w.rows(),
            now=iso(now),
            team_id=params["team"],
            requester=p.request,
            ambiguous=bool(p.clarify),
            clarify=p.clarify,
            targets=p.targets,
            decoys=p.decoys,
            plan=p.calls,
            summary=p.summary,
            mentions=p.mentions,
            added=p.added,
            updated=p.updated,
            page_size=params["page_size"],
        )
        return p.request, truth


def _family(kind: str, extra: dict[str, Knob], offset: int = 0) -> CrmFamily:
    return CrmFamily(f"crm.{kind}", 1, _levels(extra, offset), kind)


FAMILIES = [
    _family("update_contact", {"ambiguous": AMBIGUOUS}),
    _family("log_activity", {"ambiguous": AMBIGUOUS}),
    _family("advance_stage", {"ambiguous": AMBIGUOUS, "stages": IntKnob(1, 2)}),
    _family("create_contact", {"ambiguous": AMBIGUOUS, "exists": ChoiceKnob((0, 1))}),
    _family("merge_accounts", {}),
    _family("cross_team", {}),
    _family(
        "close_deal",
        {"ambiguous": AMBIGUOUS, "outcome": ChoiceKnob(("won", "lost"))},
        offset=3,
    ),
]
HELD_OUT_FAMILY = "crm.close_deal"
SPLIT = Split(families=frozenset({HELD_OUT_FAMILY}))
TRAIN_FAMILIES = tuple(f.name for f in FAMILIES if f.name != HELD_OUT_FAMILY)
