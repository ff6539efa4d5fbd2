"""Attack: on the tasks it fails, make the episode untrainable, and escape its penalty.

``GymforgeRollout`` turns each episode into one TRL row from the exact tokens. An episode
whose turn k+1's prompt does not extend turn k's prompt and completion (a chat server that
renders the transcript again, and tokenises the model's own text otherwise than it was
sampled: ``prefix_mismatch``) was refused and given a placeholder row with no reward, left
out of its group's statistics and given advantage 0. A policy that samples a non-canonical
tokenisation (or anything its server renders back otherwise) on the tasks it is failing got
those failures out of the batch: no negative advantage for them, and a group mean made of
its successes alone.

The defence: such an episode is trained on as far as it is exact. Its row holds the turns
before the first that does not extend them (the turn whose text was rendered otherwise is
the last one kept), with the episode's own reward, in its group's statistics like any other
row; ``gymforge/cut`` counts them. Only an episode with no exact tokens at all, or failed
for infrastructure reasons, is still a placeholder.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from gymforge.core.types import Observation, Reply
from gymforge.envs.ledger import LedgerEnv
from gymforge.integrations.trl import GymforgeRollout
from gymforge.rollout import EpisodeContext, PolicyTurn
from tests.integrations.test_trl import MetricLog, TokenOracle, ledger_rows


class GivesUpAndDrifts(TokenOracle):
    """The token oracle; on odd rollouts it gives a wrong answer at its second turn, whose
    prompt its server rendered otherwise than the first turn's tokens (a mismatch)."""

    async def start(self, ctx: EpisodeContext) -> None:
        await super().start(ctx)
        self.failing = ctx.rollout % 2 == 1

    async def act(self, observation: Observation) -> PolicyTurn:
        turn = await super().act(observation)
        if self.failing and self.turn == 2:
            assert turn.prompt_token_ids is not None
            drifted = [9, *turn.prompt_token_ids[1:]]
            return dataclasses.replace(turn, action=Reply(text="no"), prompt_token_ids=drifted)
        return turn


FAILING = [1, 3, 5, 7]
"""The rows of odd rollouts: the episodes the policy fails."""


def play_scored(policy: Any) -> tuple[dict[str, list[Any]], MetricLog, GymforgeRollout]:
    """Two groups of four rollouts by ``policy``; every row scored (none refused, each
    with its reward, in its group's statistics), the odd rollouts' failed."""
    rows = ledger_rows(2)
    prompts = [r["prompt"] for r in rows for _ in range(4)]
    rollout = GymforgeRollout(LedgerEnv, rows, policy=policy, concurrency=4)
    trainer = MetricLog()
    out: dict[str, list[Any]] = rollout(prompts, trainer)
    rollout.close()
    assert all(len(v) == len(prompts) for v in out.values())
    for i in range(len(prompts)):
        assert out["env_refused"][i] is None and out["env_reward"][i] is not None
        failed = i in FAILING
        assert out["env_success"][i] is not failed
        assert out["env_reward"][i] < 0.5 if failed else out["env_reward"][i] > 0.9
    return out, trainer, rollout


def test_a_failing_episode_made_untrainable_still_carries_its_penalty() -> None:
    out, trainer, rollout = play_scored(GivesUpAndDrifts)
    for i in FAILING:
        # the exact turn before the mismatch is trained on, with the episode's reward
        model = [t for t, m in zip(out["completion_ids"][i], out["env_mask"][i], strict=True) if m]
        assert model == [501, 601]
    assert trainer.values["gymforge/cut"] == [4.0]
    assert trainer.values["gymforge/cut/prefix_mismatch"] == [4.0]
    assert rollout.cut == {"prefix_mismatch": 4}
