"""Scripted models for a simulated user's or requester's place, shared by the attacks on
what their answers reveal or confirm (``test_user_sim_echo_*.py``, ``test_sim_echo_*``,
``test_user_sim_*_disguised*``, ``test_crm_requester_offered_email.py``...)."""

from __future__ import annotations

from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.core.types import Observation, Reply


class Says:
    """A counterpart model that answers every message with ``text``."""

    name = checkpoint = "says"

    def __init__(self, text: str) -> None:
        self.text = text

    async def start(self, ctx: EpisodeContext) -> None:
        return None

    async def act(self, observation: Observation) -> PolicyTurn:
        return PolicyTurn(Reply(text=self.text))
