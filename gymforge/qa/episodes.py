"""Playing one scripted episode into trajectory records, witnessed by
``gymforge.qa.truth_witness`` (shared by the checks and by the fresh process, which imports
only this, not the checks)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gymforge.core.env import Environment
from gymforge.core.policy import Policy
from gymforge.qa.truth_witness import TruthWitness
from gymforge.rollout.episode import run_episode
from gymforge.rollout.scripted import OraclePolicy, RandomPolicy
from gymforge.trajectory.schema import EpisodeKeys

if TYPE_CHECKING:
    from gymforge.qa.target import QATarget


async def play(
    env: Environment, policy: Policy, task_id: str, seed: int, tag: str = "qa"
) -> list[dict[str, Any]]:
    """One episode as trajectory records (steps, then the episode record), witnessed: it
    raises ``TruthEdited`` if the episode changed its task's hidden truth
    (``gymforge.qa.truth_witness``)."""
    witness = TruthWitness.before_episode(env, task_id)
    keys = EpisodeKeys(
        run_id=tag,
        episode_id=f"{tag}-{task_id}-{seed}",
        task_id=task_id,
        seed=seed,
        env_id=env.spec.id,
        env_version=env.spec.version,
        renderer_version=env.spec.renderer_version,
        policy_checkpoint=policy.checkpoint,
    )
    records = await run_episode(env, policy, keys)
    witness.after_episode(env, policy.name, records)
    return records


def probe_name(target: QATarget) -> str:
    """The policy of reference episodes: the oracle's, else a rarely replying random one."""
    return "oracle" if target.has_oracle else "random"


def probe_policy(name: str) -> Policy:
    """A fresh reference-episode policy by ``probe_name`` (also built in the fresh process)."""
    return OraclePolicy() if name == "oracle" else RandomPolicy(reply_rate=0.02)
