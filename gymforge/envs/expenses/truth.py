"""The hidden truth of an expenses task: the seed rows and clock (``WorldTruth``), the
batch, and the correct decision of every report."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from gymforge.world.env import WorldTruth


class Decision(BaseModel):
    """The correct decision of one report and its amount in US cents."""

    model_config = ConfigDict(frozen=True, extra="forbid")

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
