"""Attack: on the tasks it fails, answer with two tool calls at once, and escape the penalty.

A harness policy's step carries the model requests behind it (``model_turns``). A harness
that runs every tool call of one answer (any plain tool-calling loop does) takes two steps
on an answer with two calls, and the second step has no model request of its own: it was
recorded with ``capture_level: none`` and an empty ``model_turns``, which the TRL export
read as a turn below token capture. The whole episode was refused
(``below_tokens_capture``): in ``GymforgeRollout`` a placeholder row with no reward, left
out of its group's statistics and given advantage 0; in ``gymforge export --format trl``
left out. A model that fails a task gets its failure out of the batch by answering its
first turn with two tool calls: measured over 200 rollouts (50 tasks, groups of 4, half of
each group failed), the counted mean reward was 0.48 for the plain failer and 0.98 for the
saboteur, its success over counted rows 1.0 (100 of its 100 failures refused).

The defence: a harness step with no model request of its own adds no turn (its action came
from an earlier turn, which the row holds); such an episode is one row with its reward, in
its group's statistics, as the plain failer's (200 rollouts: the saboteur's counted mean
0.475, its extra step's cost below the plain failer's 0.48; none refused).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from parallel_calls import LookupEnv, Model

from gymforge.integrations.trl import GymforgeRollout, task_rows
from gymforge.rollout.resolve import resolve_policy
from gymforge.testing.openai_server import OpenAITestServer
from gymforge.trajectory.export import trl_row
from gymforge.trajectory.io import read_episodes

HARNESS = "harness:tests.serve.harness_agents:tool_agent"
GROUP = 4


def play(saboteur: bool, out_dir: Path) -> tuple[dict[str, list[Any]], GymforgeRollout]:
    """Two groups of four harness rollouts by the fake model (half of each group failed)."""
    rows = task_rows(LookupEnv, 2, seed=3)
    prompts = [r["prompt"] for r in rows for _ in range(GROUP)]
    with OpenAITestServer(Model(saboteur)) as upstream:
        source = resolve_policy(HARNESS, upstream.base_url)
        rollout = GymforgeRollout(
            LookupEnv, rows, policy=source.factory, concurrency=4, trajectory_dir=out_dir
        )
        try:
            out: dict[str, list[Any]] = rollout(prompts, None)
        finally:
            rollout.close()
    assert all(len(v) == len(prompts) for v in out.values())
    return out, rollout


def counted_mean(out: dict[str, list[Any]]) -> float:
    """The mean reward over the rows TRL scores (a placeholder's None is left out)."""
    counted = [r for r in out["env_reward"] if r is not None]
    return sum(counted) / len(counted)


def test_two_calls_in_one_answer_do_not_take_a_failure_out_of_the_batch(tmp_path: Path) -> None:
    honest, _ = play(False, tmp_path / "honest")
    sabotaged, rollout = play(True, tmp_path / "saboteur")
    assert honest["env_refused"] == [None] * len(honest["env_refused"])
    assert sum(honest["env_success"]) == len(honest["env_success"]) // 2
    # every episode of the saboteur is a row with its own reward, its failures penalised
    assert rollout.refused == {}, rollout.refused
    assert sabotaged["env_refused"] == [None] * len(sabotaged["env_refused"])
    for i in range(0, len(sabotaged["env_reward"]), GROUP):  # each group: two of each
        group = sabotaged["env_reward"][i : i + GROUP]
        assert None not in group
        assert sum(sabotaged["env_success"][i : i + GROUP]) == GROUP // 2
    assert counted_mean(sabotaged) <= counted_mean(honest)  # its extra step costs too
    assert sum(sabotaged["env_success"]) == sum(honest["env_success"])
    # the failures' model turns are trained on: tokens under the mask
    for ids, mask in zip(sabotaged["completion_ids"], sabotaged["env_mask"], strict=True):
        assert len(ids) == len(mask) and sum(mask) > 0
    # and `gymforge export --format trl` keeps them too
    logs = [log for path in sorted((tmp_path / "saboteur").rglob("*.jsonl"))
            for log in read_episodes(path)]  # fmt: skip
    assert len(logs) == 2 * GROUP
    two_calls = [log for log in logs if len(log.steps) == 4]  # two calls, then the reply
    assert len(two_calls) == GROUP
    for log in logs:
        row = trl_row(log)
        assert isinstance(row, dict), row
        assert row["reward"] == log.end.reward  # type: ignore[union-attr]
