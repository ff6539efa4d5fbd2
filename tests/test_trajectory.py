"""Trajectory files: schema, writer validation, digest chain, replay, crash safety."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from gymforge.core import IntegrityError, canonical_json
from gymforge.envs import make_env
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout import (
    EpisodeKeys,
    LocalExecutor,
    OraclePolicy,
    RandomPolicy,
    RunSpec,
    run,
    run_episode,
)
from gymforge.rollout.replay import Divergence, replay_file
from gymforge.trajectory.io import (
    TrajectoryWriter,
    read_episodes,
    seal_episode,
    verify_chain,
)
from gymforge.trajectory.schema import chain_digest, component_totals, trajectory_json_schema

SOURCE = LedgerEnv.tasks


# ---- helpers -----------------------------------------------------------------------------
def episode_records(task_id: str, seed: int, policy: Any = OraclePolicy, n: int = 0) -> list[dict]:
    keys = EpisodeKeys(
        run_id="testrun",
        episode_id=f"testrun-{n:06d}",
        task_id=task_id,
        seed=seed,
        env_id="ledger",
        env_version=LedgerEnv.spec.version,
        renderer_version=LedgerEnv.spec.renderer_version,
        policy_checkpoint=policy.checkpoint,
    )
    return asyncio.run(run_episode(LedgerEnv(), policy(), keys))


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_lines(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(canonical_json(r) + "\n" for r in records))


def reseal(records: list[dict[str, Any]], episode_id: str) -> None:
    """Recompute the digest chain of one episode in place, as a forger would."""
    previous = ""
    for r in records:
        if r["episode_id"] == episode_id:
            r["digest"] = previous = chain_digest(previous, r)


def check_file(path: Path) -> None:
    for log in read_episodes(path):
        verify_chain(log)


@pytest.fixture(scope="module")
def oracle_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("oracle")
    jobs = [(t, i) for i, t in enumerate(SOURCE.sample(4, 13, "train", difficulties=[1, 2]))]
    asyncio.run(
        run(
            RunSpec(env="ledger", policy="oracle", jobs=jobs, out=out),
            LocalExecutor(LedgerEnv, OraclePolicy),
        )
    )
    return out / "trajectories.jsonl"


@pytest.fixture
def log_copy(oracle_file: Path, tmp_path: Path) -> Path:
    path = tmp_path / "copy.jsonl"
    path.write_text(oracle_file.read_text())
    return path


# ---- schema ------------------------------------------------------------------------------
def test_schema_is_valid_draft_2020_12() -> None:
    schema = trajectory_json_schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$id"].startswith("urn:gymforge:trajectory:")


def test_every_written_line_validates_against_json_schema(tmp_path: Path) -> None:
    validator = Draft202012Validator(trajectory_json_schema())
    jobs = [(t, i) for i, t in enumerate(SOURCE.sample(8, 4, "all"))]
    lines: list[dict[str, Any]] = []
    for name, policy in (("oracle", OraclePolicy), ("random", RandomPolicy)):
        asyncio.run(
            run(
                RunSpec(env="ledger", policy="policy", jobs=jobs, out=tmp_path / name),
                LocalExecutor(LedgerEnv, policy),
            )
        )
        lines += read_lines(tmp_path / name / "trajectories.jsonl")
    kinds = {(r["record"], (r.get("action") or {}).get("kind")) for r in lines}
    assert {("step", None), ("step", "tool_call"), ("step", "reply"), ("episode", None)} <= kinds
    assert ("step", "invalid") in kinds  # the random policy emits malformed output
    for r in lines:
        errors = list(validator.iter_errors(r))
        assert errors == [], (r["record"], r.get("step"), errors[0].message)


def test_json_schema_rejects_broken_lines(oracle_file: Path) -> None:
    validator = Draft202012Validator(trajectory_json_schema())
    step = read_lines(oracle_file)[1]
    assert validator.is_valid(step)
    assert not validator.is_valid({**step, "state_fingerprint": "md5:abc"})
    assert not validator.is_valid({**step, "unexpected": 1})
    assert not validator.is_valid({**step, "record": "nope"})
    assert not validator.is_valid({k: v for k, v in step.items() if k != "digest"})


# ---- writer ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "breakage",
    [
        lambda rs: rs[1].update(reward="high"),
        lambda rs: rs[1].update(state_fingerprint="not-a-fingerprint"),
        lambda rs: rs[2].update(surprise=True),
        lambda rs: rs[1].pop("task_id"),
        lambda rs: rs[1].update(action={"kind": "telepathy"}),
        lambda rs: rs[-1].update(split="validation"),
        lambda rs: rs[0].update(step=-1),
    ],
)
def test_writer_refuses_schema_breaking_records(breakage: Any, tmp_path: Path) -> None:
    records = episode_records("ledger.transfer/v1/d1/s3", 0)
    assert len(seal_episode(records)) == len(records)  # the untouched episode seals
    breakage(records)
    with pytest.raises(IntegrityError, match="breaks the trajectory schema"):
        seal_episode(records)
    path = tmp_path / "t.jsonl"
    with TrajectoryWriter(path) as writer, pytest.raises(IntegrityError):
        writer.write_episode(records)
    assert path.read_text() == ""  # nothing half-written


def test_sealed_lines_are_canonical_and_chained() -> None:
    records = episode_records("ledger.transfer/v1/d1/s3", 0)
    lines = seal_episode(records)
    parsed = [json.loads(line) for line in lines]
    assert [canonical_json(p) for p in parsed] == lines
    previous = ""
    for p in parsed:
        assert p["digest"] == chain_digest(previous, p)
        previous = p["digest"]
    assert parsed[-1]["record"] == "episode" and parsed[-1]["steps"] == len(parsed) - 2


# ---- digest chain ------------------------------------------------------------------------
def test_untouched_file_verifies(oracle_file: Path) -> None:
    episodes = read_episodes(oracle_file)
    assert len(episodes) == 4
    for log in episodes:
        verify_chain(log)
        assert log.end is not None and log.end.success


def edit_reward_component(records: list[dict]) -> None:
    records[2]["reward_components"]["step_cost"] = 0.5


def edit_observation(records: list[dict]) -> None:
    records[1]["observation"]["tokens"] += 1


def edit_episode_record(records: list[dict]) -> None:
    end = next(r for r in records if r["record"] == "episode")
    end["success"] = not end["success"]


def edit_episode_reward(records: list[dict]) -> None:
    end = next(r for r in records if r["record"] == "episode")
    end["reward"] = 5.0


def delete_step(records: list[dict]) -> None:
    del records[2]


def swap_steps(records: list[dict]) -> None:
    records[1], records[2] = records[2], records[1]


def edit_action(records: list[dict]) -> None:
    records[1]["action"]["arguments"]["name"] = "Zed"


@pytest.mark.parametrize(
    "tamper",
    [
        edit_reward_component,
        edit_observation,
        edit_episode_record,
        edit_episode_reward,
        delete_step,
        swap_steps,
        edit_action,
    ],
)
def test_verify_chain_catches_edits(tamper: Any, log_copy: Path) -> None:
    records = read_lines(log_copy)
    tamper(records)
    write_lines(log_copy, records)
    first = read_episodes(log_copy)[0]
    with pytest.raises(IntegrityError, match="digest mismatch"):
        verify_chain(first)
    for log in read_episodes(log_copy)[1:]:  # other episodes are untouched
        verify_chain(log)


def test_resealed_deleted_step_is_caught_by_counts(log_copy: Path) -> None:
    records = read_lines(log_copy)
    first_id = records[0]["episode_id"]
    del records[2]
    for i, r in enumerate(r for r in records if r["episode_id"] == first_id):
        if r["record"] == "step":
            r["step"] = i
    reseal(records, first_id)
    write_lines(log_copy, records)
    with pytest.raises(IntegrityError, match="counts"):
        verify_chain(read_episodes(log_copy)[0])


@pytest.mark.parametrize(
    ("field", "value"), [("reward", 5.0), ("success", False), ("truncated", True)]
)
def test_resealed_episode_totals_are_checked_against_the_steps(
    field: str, value: Any, log_copy: Path
) -> None:
    """A forger who edits the closing record and re-chains the digests still fails: the
    episode record's reward, success and end flags must be what its steps give."""
    records = read_lines(log_copy)
    first_id = records[0]["episode_id"]
    end = next(r for r in records if r["record"] == "episode" and r["episode_id"] == first_id)
    assert end[field] != value
    end[field] = value
    reseal(records, first_id)
    write_lines(log_copy, records)
    with pytest.raises(IntegrityError, match=f"episode record {field} = .* but its steps give"):
        verify_chain(read_episodes(log_copy)[0])


def test_incomplete_last_episode_is_reported(log_copy: Path) -> None:
    records = read_lines(log_copy)
    assert records[-1]["record"] == "episode"
    write_lines(log_copy, records[:-2])
    episodes = read_episodes(log_copy)
    for log in episodes[:-1]:
        verify_chain(log)
    assert episodes[-1].end is None
    with pytest.raises(IntegrityError, match="incomplete"):
        verify_chain(episodes[-1])


def test_record_after_episode_end_is_rejected(log_copy: Path) -> None:
    records = read_lines(log_copy)
    end = next(i for i, r in enumerate(records) if r["record"] == "episode")
    records.insert(end + 1, records[1])
    write_lines(log_copy, records)
    with pytest.raises(IntegrityError, match=f"line {end + 2}"):
        read_episodes(log_copy)


# ---- replay ------------------------------------------------------------------------------
def test_replay_passes_on_untouched_file(oracle_file: Path) -> None:
    report = asyncio.run(replay_file(oracle_file, make_env))
    assert report.ok and report.divergence is None
    assert report.episodes == 4
    assert report.steps == sum(1 for r in read_lines(oracle_file) if r["record"] == "step")


def test_replay_passes_on_random_policy_file(tmp_path: Path) -> None:
    jobs = [(t, i) for i, t in enumerate(SOURCE.sample(6, 31, "all"))]
    asyncio.run(
        run(
            RunSpec(env="ledger", policy="random", jobs=jobs, out=tmp_path),
            LocalExecutor(LedgerEnv, RandomPolicy),
        )
    )
    report = asyncio.run(replay_file(tmp_path / "trajectories.jsonl", make_env))
    assert report.ok and report.episodes == 6


def test_replay_detects_tampered_action_with_valid_chain(log_copy: Path) -> None:
    records = read_lines(log_copy)
    first_id = records[0]["episode_id"]
    transfer = next(
        r
        for r in records
        if r["episode_id"] == first_id
        and r["record"] == "step"
        and (r["action"] or {}).get("name") == "transfer"
    )
    transfer["action"]["arguments"]["amount_cents"] += 1
    reseal(records, first_id)
    write_lines(log_copy, records)
    check_file(log_copy)  # the forged chain is valid: only replay can catch it
    report = asyncio.run(replay_file(log_copy, make_env))
    assert not report.ok
    d = report.divergence
    assert isinstance(d, Divergence)
    assert d.episode_id == first_id
    assert d.step == transfer["step"]
    assert d.field in {"observation", "tool_result", "info", "state_fingerprint"}
    assert d.recorded != d.replayed
    assert f"diverges at step {transfer['step']}" in d.describe()


def retotal(records: list[dict[str, Any]], first_id: str) -> None:
    """Make the first episode's record agree with its (forged) steps, as a careful forger would."""
    steps = [r for r in records if r["episode_id"] == first_id and r["record"] == "step"]
    end = next(r for r in records if r["episode_id"] == first_id and r["record"] == "episode")
    totals = component_totals([s["reward_components"] for s in steps])
    end.update(
        steps=len(steps) - 1,
        reward_components=totals,
        reward=math.fsum(totals.values()),
        terminated=steps[-1]["terminated"],
        truncated=steps[-1]["truncated"],
        success=bool(steps[-1]["info"].get("success")),
    )


def test_replay_detects_tampered_outcome_with_valid_chain(log_copy: Path) -> None:
    records = read_lines(log_copy)
    first_id = records[0]["episode_id"]
    records[1]["reward_components"]["step_cost"] = 0.0
    records[1]["reward"] = 0.0
    retotal(records, first_id)
    reseal(records, first_id)
    write_lines(log_copy, records)
    check_file(log_copy)
    report = asyncio.run(replay_file(log_copy, make_env))
    assert report.divergence is not None
    assert (report.divergence.step, report.divergence.field) == (1, "reward")


def test_replay_refuses_broken_chain(log_copy: Path) -> None:
    records = read_lines(log_copy)
    records[1]["action"]["arguments"]["name"] = "Zed"
    write_lines(log_copy, records)  # not resealed
    with pytest.raises(IntegrityError, match="digest mismatch"):
        asyncio.run(replay_file(log_copy, make_env))


def test_replay_reports_env_version_mismatch(log_copy: Path) -> None:
    records = read_lines(log_copy)
    first_id = records[0]["episode_id"]
    for r in records:
        if r["episode_id"] == first_id:
            r["env_version"] = "0.9.0"
    reseal(records, first_id)
    write_lines(log_copy, records)
    report = asyncio.run(replay_file(log_copy, make_env))
    assert report.divergence is not None and report.divergence.field == "env_version"


def forge_success(records: list[dict[str, Any]]) -> str:
    """Turn the first episode into a failure on paper: flip its episode record, reseal."""
    first_id = records[0]["episode_id"]
    end = next(r for r in records if r["episode_id"] == first_id and r["record"] == "episode")
    end["success"] = False
    end["failure_reason"] = "wrong_transfers"
    end["reward"] = -1.0
    end["reward_components"] = {"step_cost": -1.0, "task": 0.0}
    reseal(records, first_id)
    return first_id


def test_verify_chain_checks_episode_totals(log_copy: Path) -> None:
    records = read_lines(log_copy)
    forge_success(records)
    write_lines(log_copy, records)
    with pytest.raises(IntegrityError):
        verify_chain(read_episodes(log_copy)[0])


def test_replay_detects_forged_episode_record(log_copy: Path) -> None:
    records = read_lines(log_copy)
    forge_success(records)
    write_lines(log_copy, records)
    with pytest.raises(IntegrityError, match="episode record"):
        asyncio.run(replay_file(log_copy, make_env))


# ---- crash safety ------------------------------------------------------------------------
def test_killed_run_keeps_finished_episodes(tmp_path: Path) -> None:
    path = tmp_path / "trajectories.jsonl"
    first = episode_records("ledger.transfer/v1/d1/s3", 0, n=0)
    second = episode_records("ledger.transfer/v1/d2/s40", 1, n=1)
    third = episode_records("ledger.transfer/v1/d1/s8", 2, n=2)
    with TrajectoryWriter(path) as writer:
        writer.write_episode(first)
        writer.write_episode(second)
    intact = path.read_text()
    n_intact = len(intact.splitlines())
    assert n_intact == len(first) + len(second)
    half = seal_episode(third)[0]
    with open(path, "a", encoding="utf-8") as fh:  # the kill: half of a line, no newline
        fh.write(half[: len(half) // 2])
    with pytest.raises(IntegrityError, match=f"line {n_intact + 1}"):
        read_episodes(path)
    # the finished episodes are intact and verify on their own
    assert path.read_text().startswith(intact)
    kept = tmp_path / "kept.jsonl"
    kept.write_text("".join(path.read_text().splitlines(keepends=True)[:n_intact]))
    episodes = read_episodes(kept)
    assert [e.episode_id for e in episodes] == ["testrun-000000", "testrun-000001"]
    for log in episodes:
        verify_chain(log)
    assert asyncio.run(replay_file(kept, make_env)).ok


def test_writer_append_mode(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with TrajectoryWriter(path) as w:
        w.write_episode(episode_records("ledger.transfer/v1/d1/s3", 0, n=0))
    with TrajectoryWriter(path, append=True) as w:
        w.write_episode(episode_records("ledger.transfer/v1/d1/s8", 0, n=1))
    assert len(read_episodes(path)) == 2
    with TrajectoryWriter(path) as w:  # default mode truncates
        w.write_episode(episode_records("ledger.transfer/v1/d1/s8", 0, n=2))
    assert [e.episode_id for e in read_episodes(path)] == ["testrun-000002"]


def cut_episode_short(records: list[dict[str, Any]], first_id: str) -> None:
    """Drop the last steps of the first episode (it now ends on a non-final step)."""
    steps = [r for r in records if r["episode_id"] == first_id and r["record"] == "step"]
    for r in steps[3:]:
        records.remove(r)
    retotal(records, first_id)


def continue_after_end(records: list[dict[str, Any]], first_id: str) -> None:
    """Repeat the final step of the first episode after the episode ended."""
    steps = [r for r in records if r["episode_id"] == first_id and r["record"] == "step"]
    end = next(r for r in records if r["episode_id"] == first_id and r["record"] == "episode")
    extra = json.loads(json.dumps(steps[-1]))
    extra["step"] = steps[-1]["step"] + 1
    records.insert(records.index(end), extra)
    retotal(records, first_id)


def end_early_on_paper(records: list[dict[str, Any]], first_id: str) -> None:
    """Cut the first episode short and mark the new last step terminal: structurally valid."""
    cut_episode_short(records, first_id)
    steps = [r for r in records if r["episode_id"] == first_id and r["record"] == "step"]
    steps[-1]["terminated"] = True
    retotal(records, first_id)


def run_on_after_end_on_paper(records: list[dict[str, Any]], first_id: str) -> None:
    """Unmark the real last step and add a terminal step after it: structurally valid."""
    steps = [r for r in records if r["episode_id"] == first_id and r["record"] == "step"]
    steps[-1]["terminated"] = False
    continue_after_end(records, first_id)
    steps = [r for r in records if r["episode_id"] == first_id and r["record"] == "step"]
    steps[-1]["terminated"] = True
    retotal(records, first_id)


@pytest.mark.parametrize(
    ("forge", "message"),
    [(cut_episode_short, "does not end the episode"), (continue_after_end, "more steps follow")],
)
def test_verify_chain_refuses_misplaced_episode_end(
    forge: Any, message: str, log_copy: Path
) -> None:
    records = read_lines(log_copy)
    first_id = records[0]["episode_id"]
    forge(records, first_id)
    reseal(records, first_id)
    write_lines(log_copy, records)
    with pytest.raises(IntegrityError, match=message):
        asyncio.run(replay_file(log_copy, make_env))


@pytest.mark.parametrize("forge", [end_early_on_paper, run_on_after_end_on_paper])
def test_replay_detects_episode_end_mismatch(forge: Any, log_copy: Path) -> None:
    records = read_lines(log_copy)
    first_id = records[0]["episode_id"]
    forge(records, first_id)
    reseal(records, first_id)
    write_lines(log_copy, records)
    check_file(log_copy)  # numbering, counts, totals and chain are all consistent
    report = asyncio.run(replay_file(log_copy, make_env))
    assert not report.ok
    assert report.divergence is not None and report.divergence.episode_id == first_id


def test_a_run_recorded_before_tools_json_existed_still_replays(tmp_path: Path) -> None:
    """Observations gained ``tools_json`` (derived from ``tools``); files written before it
    must replay as they did, and an edit of ``tools`` itself is still a divergence."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent / "redteam"))
    from redteam_logs import forge, ledger_run, read

    from gymforge.registry.resolve import make_env
    from gymforge.rollout.replay import replay_file

    path = ledger_run(tmp_path / "run", "oracle", n=2, key=None)
    records = read(path)
    for r in records:
        if r.get("record") == "step":
            r["observation"].pop("tools_json", None)
    old = tmp_path / "old.jsonl"
    forge(records, old, strip_seals=True)
    assert asyncio.run(replay_file(old, make_env)).ok
    steps = [r for r in records if r.get("record") == "step" and r["observation"]["tools"]]
    steps[0]["observation"]["tools"] = steps[0]["observation"]["tools"][1:]
    forge(records, old, strip_seals=True)
    report = asyncio.run(replay_file(old, make_env))
    assert not report.ok and report.divergence and report.divergence.field == "observation"
