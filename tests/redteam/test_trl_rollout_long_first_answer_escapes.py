"""Attack: on the tasks it fails, answer the first turn at length, and escape the penalty.

A first turn that runs past the policy's ``call_timeout`` while its server is seen
generating is the policy's counted failure (``turn_timeout``, ``rollout.liveness``): the
episode ends before the agent acted, with no model turn recorded (the answer never came).
``GymforgeRollout`` turned that episode into a row from its exact tokens, found none
(``below_tokens_capture``) and gave it a placeholder row with no reward: out of its group's
statistics, advantage 0. A policy answering at length on the tasks it fails (a single-turn
task's only turn) took those failures out of the batch, its group's mean made of its
successes alone.

A first answer the server fails on, judged the policy's (``transcript_failed``), ends the
episode the same way. The defence: an episode that ended, counted, before its first model
turn was answered has no tokens to train on, but its reward stays in its group's
statistics: a row with no model token (a masked EOS) and the episode's reward, counted in
``gymforge/cut`` as ``no_model_turn``.
"""

from __future__ import annotations

import pytest
from test_trl_rollout_refusal_escapes_penalty import FAILING, play_scored

from gymforge.core.errors import TranscriptFailed, TranscriptRefused, TurnTimedOut
from gymforge.core.types import Observation
from gymforge.rollout import EpisodeContext, PolicyTurn
from tests.integrations.test_trl import TokenOracle


def long_answer() -> Exception:
    err = TurnTimedOut("every attempt ran past the call timeout")
    err.answering = True  # the server answered others meanwhile: a long answer
    return err


def failed_answer() -> Exception:  # judged the policy's (rollout.transcript_refusal)
    return TranscriptFailed("the server fails on what the agent generates")


class FailsFirstTurn(TokenOracle):
    """The token oracle; on odd rollouts its first turn ends with ``error()``, counted."""

    error = staticmethod(long_answer)

    async def start(self, ctx: EpisodeContext) -> None:
        await super().start(ctx)
        self.failing = ctx.rollout % 2 == 1

    async def act(self, observation: Observation) -> PolicyTurn:
        if self.failing:
            raise self.error()
        return await super().act(observation)


def refused_answer() -> Exception:  # judged the policy's (rollout.transcript_refusal)
    return TranscriptRefused("the server refuses what the agent generates")


class FirstAnswerFailed(FailsFirstTurn):
    error = staticmethod(failed_answer)


class FirstAnswerRefused(FailsFirstTurn):
    error = staticmethod(refused_answer)


@pytest.mark.parametrize("policy", [FailsFirstTurn, FirstAnswerFailed, FirstAnswerRefused])
def test_a_first_turn_ended_counted_stays_in_its_groups_statistics(
    policy: type[TokenOracle],
) -> None:
    out, trainer, rollout = play_scored(policy)
    for i in FAILING:
        assert out["env_mask"][i] == [0] and len(out["completion_ids"][i]) == 1  # no token
        assert out["prompt_ids"][i]
    assert trainer.values["gymforge/cut/no_model_turn"] == [4.0]
    assert rollout.cut == {"no_model_turn": 4}
