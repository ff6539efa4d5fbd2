"""Attack: one GRPO group split over two training processes is played as duplicates.

TRL calls ``rollout_func`` on every process of a distributed run, each with its slice of the
global batch, and a group of ``num_generations`` rollouts of one prompt can span two
processes. ``GymforgeRollout`` numbered its rollouts from the call count and the position in
the slice alone, so both processes played the same ``(task, seed, rollout)`` jobs: the same
sampling seeds (the same samples, counted twice in the group's advantage statistics), and
with a shared ``trajectory_dir`` the same ``call_NNNNNN/trajectories.jsonl``, each process
truncating the other's and reading back its rows by job key (another process's episode, its
tokens and reward, in place of its own). Success of the attack: two processes' rows of one
group coming from the same sampling seed, or written to one file. The defence: rollout
numbers and trajectory files are per process (``accelerator.process_index``).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from gymforge.core.types import Observation
from gymforge.envs.ledger import LedgerEnv
from gymforge.integrations.trl import task_rows
from gymforge.integrations.trl_rollout import GymforgeRollout
from gymforge.rollout import CapturedTurn, EpisodeContext, OraclePolicy, PolicyTurn
from gymforge.trajectory.io import read_episodes


class SeedTokens(OraclePolicy):
    """The oracle dressed as a model whose every completion spells its sampling seed."""

    name = checkpoint = "seed-tokens"

    async def start(self, ctx: EpisodeContext) -> None:
        await super().start(ctx)
        self.context, self.sample = [1, 2, 3], ctx.sampling_seed

    async def act(self, observation: Observation) -> PolicyTurn:
        action = (await super().act(observation)).action
        self.context += [7] * max(1, observation.tokens)
        prompt = list(self.context)
        completion = [self.sample >> 16, self.sample & 0xFFFF]
        self.context += completion
        return CapturedTurn(
            action,
            capture_level="tokens",
            prompt_token_ids=prompt,
            completion_token_ids=completion,
            logprobs=[-0.5, -0.25],
        )


def trainer(index: int, processes: int) -> Any:
    """What ``rollout_func`` reads of a GRPOTrainer on process ``index``."""
    return SimpleNamespace(
        accelerator=SimpleNamespace(process_index=index, num_processes=processes),
        processing_class=SimpleNamespace(eos_token_id=0),
    )


def test_a_group_split_over_two_processes_is_four_samples(tmp_path: Path) -> None:
    rows = task_rows(LedgerEnv, 1, seed=2, split="train", difficulties=[1])
    half = [rows[0]["prompt"]] * 2  # num_generations 4: two rollouts on each process
    outs = []
    for index in (0, 1):
        rollout = GymforgeRollout(LedgerEnv, rows, policy=SeedTokens, trajectory_dir=tmp_path)
        outs.append(rollout(half, trainer(index, 2)))
        rollout.close()
    samples = [tuple(ids[-2:]) for out in outs for ids in out["completion_ids"]]
    assert len(set(samples)) == 4, samples  # four sampling seeds, not two played twice
    files = sorted(tmp_path.rglob("trajectories.jsonl"))
    assert len(files) == 2  # one per process: neither truncates the other's
    keys = [(e.end.task_id, e.end.rollout) for f in files for e in read_episodes(f) if e.end]
    assert len(keys) == len(set(keys)) == 4


def test_one_process_keeps_its_layout(tmp_path: Path) -> None:
    rows = task_rows(LedgerEnv, 1, seed=2, split="train", difficulties=[1])
    rollout = GymforgeRollout(LedgerEnv, rows, policy=SeedTokens, trajectory_dir=tmp_path)
    out = rollout([rows[0]["prompt"]] * 2, trainer(0, 1))
    rollout.close()
    assert len({tuple(ids[-2:]) for ids in out["completion_ids"]}) == 2
    assert (tmp_path / "call_000000" / "trajectories.jsonl").exists()
