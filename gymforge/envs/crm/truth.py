"""The hidden truth of a CRM task: the seed rows and clock (``WorldTruth``), the team the
agent acts for, the requester's hidden intent (what a clarifying question reveals), the
calls a correct agent makes and the rows it changes."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from gymforge.core.types import JSON
from gymforge.world.env import WorldTruth

_FROZEN = ConfigDict(frozen=True, extra="forbid")


class Clarification(BaseModel):
    """A fact of the requester's hidden intent, revealed by a question that contains one of
    ``keywords`` (see ``gymforge.world.sim.Slot``); ``say`` is how they phrase it."""

    model_config = _FROZEN

    name: str
    value: str
    keywords: list[str]
    say: str


class PlannedCall(BaseModel):
    """One tool call of the oracle's plan."""

    model_config = _FROZEN

    tool: str
    args: dict[str, JSON]


class CrmTruth(WorldTruth):
    """``ambiguous``: the request alone does not say which record (or value) is meant, and
    only ``clarify`` settles it; ``targets``: the records a write may touch only after the
    clarification (the meant one and its look-alike); ``decoys``: meant id -> look-alike id,
    what an agent that guesses instead of asking acts on. ``added``/``updated``: the rows a
    correct agent adds (compared on the keys given) and updates (primary key -> values);
    ``mentions``: a change request must state one of these (the amount, spelled any of the
    usual ways) and no other amount but the record's current one (``policy.change_findings``)."""

    team_id: str
    requester: str
    ambiguous: bool
    clarify: list[Clarification]
    targets: list[str]
    decoys: dict[str, str]
    plan: list[PlannedCall]
    summary: str
    mentions: list[str]
    added: dict[str, list[dict[str, Any]]]
    updated: dict[str, dict[str, dict[str, Any]]]
    page_size: int
