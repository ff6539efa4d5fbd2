"""The hidden truth of an expenses task: the seed rows and clock (``WorldTruth``), the
batch, and the correct decision of every report."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict
from typing_extensions import TypedDict  # pydantic validates typing's only from 3.12 on

from gymforge.world.env import WorldTruth


class Decision(TypedDict):
    """The correct decision of one report and its amount in US cents. A validated dict, not
    a model: a batch has 30-60, and a dict is validated at a third of a model's cost and
    written into ``Task.truth`` as it is (a model would be built, then dumped back). Treat
    it as read-only, like every other value of a truth."""

    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]

    decision: Literal["approve", "reject", "escalate"]
    reason_code: str
    usd: int


class ExpenseTruth(WorldTruth):
    """``order``: report ids in submission order; ``employees``: report id -> employee id;
    ``pages``: how many pages of ``page_size`` the batch's report list has."""

    batch_id: str
    decisions: dict[str, Decision]
    order: list[str]
    employees: dict[str, str]
    pages: int
    page_size: int
