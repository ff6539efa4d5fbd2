"""Attack: on the tasks it fails, answer the first turn at length, and escape the penalty.

A first turn that runs past the policy's ``call_timeout`` while its server is seen
generating is the policy's counted failure (``turn_timeout``, ``rollout.liveness``): the
episode ends before the agent acted, with no model turn recorded (the answer never came).
``GymforgeRollout`` turned that episode into a row from its exact tokens, found none
(``below_tokens_capture``) and gave it a placeholder row with no reward: out of its group's
statistics, advantage 0. A policy answering at length on the tasks it fails (a single-turn
task's only turn) took those failures out of the batch, its group's mean made of its
successes alone.

The defence: an episode that ended, counted, before its first model turn was answered has
no tokens to train on, but its reward stays in its group's statistics: a row with no model
token (a masked EOS) and the episode's reward, counted in ``gymforge/cut`` as
``no_model_turn``.
"""

from __future__ import annotations

from typing import Any

from gymforge.core.errors import TurnTimedOut
from gymforge.core.types import Observation
from gymforge.envs.ledger import LedgerEnv
from gymforge.integrations.trl import GymforgeRollout
from gymforge.rollout import EpisodeContext, PolicyTurn
from tests.integrations.test_trl import MetricLog, TokenOracle, ledger_rows


class AnswersAtLength(TokenOracle):
    """The token oracle; on odd rollouts its first answer is too long to wait for."""

    async def start(self, ctx: EpisodeContext) -> None:
        await super().start(ctx)
        self.failing = ctx.rollout % 2 == 1

    async def act(self, observation: Observation) -> PolicyTurn:
        if self.failing:
            err = TurnTimedOut("every attempt ran past the call timeout")
            err.answering = True  # the server answered others meanwhile: a long answer
            raise err
        return await super().act(observation)


def test_a_first_answer_too_long_stays_in_its_groups_statistics() -> None:
    rows = ledger_rows(2)
    prompts = [r["prompt"] for r in rows for _ in range(4)]
    rollout = GymforgeRollout(LedgerEnv, rows, policy=AnswersAtLength, concurrency=4)
    trainer = MetricLog()
    out: dict[str, list[Any]] = rollout(prompts, trainer)
    rollout.close()
    failing = [1, 3, 5, 7]
    assert all(len(v) == len(prompts) for v in out.values())
    for i in range(len(prompts)):
        assert out["env_refused"][i] is None  # every row scored, in its group's statistics
        assert out["env_reward"][i] is not None
    for i in failing:
        assert not out["env_success"][i] and out["env_reward"][i] < 0.5
        assert out["env_mask"][i] == [0] and len(out["completion_ids"][i]) == 1  # no token
        assert out["prompt_ids"][i]
    assert trainer.values["gymforge/cut/no_model_turn"] == [4.0]
    assert rollout.cut == {"no_model_turn": 4}
