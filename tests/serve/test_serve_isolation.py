"""Per-session isolation: interleaved and concurrent remote sessions reproduce local runs
step for step; the remote task source answers exactly as the local one."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from serve_helpers import TOKEN

from gymforge.core.seeding import canonical_json, fingerprint
from gymforge.envs.ledger import LedgerEnv
from gymforge.qa.checks.common import play
from gymforge.rollout.episode import reset_outcome, step_outcome
from gymforge.rollout.replay import ACTION_ADAPTER, COMPARED
from gymforge.rollout.scripted import OraclePolicy, RandomPolicy
from gymforge.serve.client import RemoteOracleEnvironment, remote_factory
from gymforge.serve.config import ServeConfig
from gymforge.serve.launch import ServerThread
from gymforge.tasks.source import TRAINING_PATHS

LOCAL = LedgerEnv.tasks


def view(records: list[dict[str, Any]]) -> list[str]:
    return [canonical_json({k: r[k] for k in COMPARED}) for r in records[:-1]]


async def local_episode(task_id: str, seed: int, policy: Any) -> list[dict[str, Any]]:
    env = LedgerEnv()
    try:
        return await play(env, policy, task_id, seed)
    finally:
        await env.close()


def test_interleaved_sessions_match_solo_local_runs(ledger_server: ServerThread) -> None:
    """Two sessions on one server, stepped alternately with the action logs of two local
    episodes (different tasks, one with faults), must reproduce them exactly."""
    a_id, b_id = LOCAL.sample(1, 5, "train", [1])[0], LOCAL.sample(1, 6, "train", [3])[0]
    a, b = (
        asyncio.run(local_episode(a_id, 11, OraclePolicy())),
        asyncio.run(local_episode(b_id, 12, OraclePolicy())),
    )
    factory = remote_factory(ledger_server.url, TOKEN)

    async def interleave() -> int:
        envs = [factory(), factory()]
        logs = [a[:-1], b[:-1]]
        compared = 0
        try:
            for env, log in zip(envs, logs, strict=True):
                obs = await env.reset(log[0]["task_id"], log[0]["seed"])
                got = reset_outcome(obs, fingerprint(await env.snapshot()))
                assert canonical_json(got) == canonical_json({k: log[0][k] for k in got})
            assert envs[0].session_id != envs[1].session_id
            for step in range(1, max(len(a), len(b)) - 1):
                for env, log in zip(envs, logs, strict=True):
                    if step >= len(log):
                        continue
                    result = await env.step(ACTION_ADAPTER.validate_python(log[step]["action"]))
                    got = step_outcome(result, fingerprint(await env.snapshot()))
                    assert canonical_json(got) == canonical_json({k: log[step][k] for k in got}), (
                        f"step {step} of {log[0]['task_id']} diverged"
                    )
                    compared += 1
        finally:
            for env in envs:
                await env.close()
        return compared

    assert asyncio.run(interleave()) == len(a) + len(b) - 4


def test_concurrent_sessions_match_local_runs(ledger_server: ServerThread) -> None:
    """Sixteen concurrent remote episodes (oracle and random, with faults) equal the same
    episodes played locally one at a time."""
    pairs = [(t, 100 + i) for i, t in enumerate(LOCAL.sample(16, 9, "all"))]
    factory = remote_factory(ledger_server.url, TOKEN)

    def policy(i: int) -> Any:
        return OraclePolicy() if i % 2 else RandomPolicy()

    async def remote() -> list[list[dict[str, Any]]]:
        async def one(i: int, task_id: str, seed: int) -> list[dict[str, Any]]:
            env = factory()
            try:
                return await play(env, policy(i), task_id, seed)
            finally:
                await env.close()

        return await asyncio.gather(*(one(i, t, s) for i, (t, s) in enumerate(pairs)))

    async def local() -> list[list[dict[str, Any]]]:
        return [await local_episode(t, s, policy(i)) for i, (t, s) in enumerate(pairs)]

    remote_runs, local_runs = asyncio.run(remote()), asyncio.run(local())
    for (task_id, _), got, want in zip(pairs, remote_runs, local_runs, strict=True):
        assert view(got) == view(want), task_id
        for key in ("success", "family", "difficulty", "split", "reward", "steps"):
            assert got[-1][key] == want[-1][key], (task_id, key)


def test_remote_task_source_answers_like_the_local_one(ledger_server: ServerThread) -> None:
    env = remote_factory(ledger_server.url, TOKEN)()
    assert isinstance(env, RemoteOracleEnvironment)
    remote = env.tasks
    assert remote is not None
    assert sorted(remote.families) == sorted(LOCAL.families)
    fam, local_fam = remote.families["ledger.transfer"], LOCAL.families["ledger.transfer"]
    assert sorted(fam.levels) == sorted(local_fam.levels)
    assert fam.levels[2].knobs == dict(local_fam.levels[2].knobs)
    assert remote.split.declared and set(remote.split.regions["ledger.transfer"]) == {
        "three_transfers"
    }
    for split in ("train", "heldout", "all"):
        assert remote.sample(40, 3, split) == LOCAL.sample(40, 3, split)  # type: ignore[arg-type]
    assert remote.sample(5, 1, "train", [2]) == LOCAL.sample(5, 1, "train", [2])
    for task_id in LOCAL.sample(30, 4, "all"):
        got, want = remote.resolve(task_id), LOCAL.resolve(task_id)
        assert got.model_dump(exclude={"truth"}) == want.model_dump(exclude={"truth"})
        assert set(got.truth) == {"sha256"}, "the hidden truth never crosses the wire"
        assert remote.split.is_heldout(got.family, got.params) == (want.split == "heldout")
        params = want.params
        assert fam.difficulty(params) == local_fam.difficulty(params)
        assert fam.neighbors(params) == local_fam.neighbors(params)
        assert fam.variant_id(params, 7) == local_fam.variant_id(params, 7)
    assert fam.params_for(3, 99) == local_fam.params_for(3, 99)
    for name, path in TRAINING_PATHS.items():
        assert path(remote, 60, 2) == path(LOCAL, 60, 2), name
    plan = env.oracle_plan(LOCAL.resolve(LOCAL.sample(1, 0)[0]))
    assert plan == LedgerEnv().oracle_plan(LOCAL.resolve(LOCAL.sample(1, 0)[0]))


def test_a_served_dataset_is_sampled_and_played_remotely(tmp_path: Path) -> None:
    rows = [
        {"task_id": "mini/1", "question": "1 + 2?", "answer": "3"},
        {"task_id": "mini/2", "question": "2 * 5?", "answer": "10"},
    ]
    path = tmp_path / "mini.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with ServerThread("math", ServeConfig(qa_hooks=True), dataset=path) as server:
        env = remote_factory(server.url)()
        assert env.tasks is not None
        (dataset,) = env.tasks.datasets
        assert dataset.name == "mini" and dataset.pin.startswith("mini@") and len(dataset) == 2
        ids = env.tasks.sample(4, 0, "all", families=["mini"])
        assert set(ids) <= {"mini/1", "mini/2"}
        assert env.tasks.resolve("mini/2").prompt.startswith("2 * 5?")

        async def episode() -> list[dict[str, Any]]:
            try:
                return await play(env, OraclePolicy(), "mini/2", 0)
            finally:
                await env.close()

        assert asyncio.run(episode())[-1]["success"]
