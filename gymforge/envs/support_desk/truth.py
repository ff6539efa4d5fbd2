"""The hidden truth of a support-desk task: the seed rows and clock (``WorldTruth``), the
case and its customer, what the caller says about who they are, the issues with the effect
a correct agent has on the world, and the persona the user simulator plays."""

from __future__ import annotations

from typing import NotRequired

from pydantic import BaseModel, ConfigDict, with_config
from typing_extensions import TypedDict  # pydantic validates typing's only from 3.12 on

from gymforge.world.env import WorldTruth
from gymforge.world.sim import Tone

_FROZEN = ConfigDict(frozen=True, extra="forbid")
# the one-effect rows and the identity: validated dicts, not models (a few per task, validated
# at a third of a model's cost and written into Task.truth as they are); read-only like any
# other value of a truth
_CLOSED = ConfigDict(extra="forbid")


@with_config(_CLOSED)
class Refund(TypedDict):
    """The refund row a correct agent adds (and the ``issue_refund`` arguments)."""

    payment_id: str
    method_id: str
    amount_cents: int


@with_config(_CLOSED)
class Credit(TypedDict):
    """The goodwill credit row a correct agent adds."""

    account_id: str
    amount_cents: int
    kind: str


@with_config(_CLOSED)
class Escalation(TypedDict):
    """The escalation row a correct agent adds (and the ``escalate_case`` arguments)."""

    team: str
    amount_cents: int


@with_config(_CLOSED)
class Issue(TypedDict):
    """One issue the customer raises: what they ask, the outcome code a correct agent
    closes with, and the one effect it has (``refund``, ``credit``, ``escalation``; none
    when the right answer is to decline). A key left out is the same as ``None``."""

    kind: str
    ask: str
    code: str
    payment_id: NotRequired[str | None]
    amount_cents: NotRequired[int | None]
    refund: NotRequired[Refund | None]
    credit: NotRequired[Credit | None]
    escalation: NotRequired[Escalation | None]


@with_config(_CLOSED)
class Identity(TypedDict):
    """What the caller gives as their email and ZIP code; ``valid``: both are right."""

    email: str
    zip: str
    valid: bool


@with_config(_CLOSED)
class SlotTruth(TypedDict):
    """A fact the simulated customer reveals when asked (see ``gymforge.world.sim.Slot``);
    no ``say``: the same as ``say=""``."""

    name: str
    value: str
    keywords: list[str]
    say: NotRequired[str]


class PersonaTruth(BaseModel):
    """The customer the user simulator plays."""

    model_config = _FROZEN

    name: str
    tone: Tone
    opening: str
    nudge: str
    slots: list[SlotTruth]


class DeskTruth(WorldTruth):
    """See the module docstring. ``outage``: the family forces tool faults."""

    case_id: str
    customer_id: str
    account_id: str
    identity: Identity
    fraud: bool
    issues: list[Issue]
    codes: list[str]
    payment_pages: int
    page_size: int
    persona: PersonaTruth
    outage: bool = False
