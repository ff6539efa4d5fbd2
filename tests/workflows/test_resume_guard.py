"""Runs that cannot mix: --resume checks the run's manifest; --overwrite is explicit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from wf_helpers import cli, episodes, math_rows, write_jsonl

from gymforge.rollout import manifest as manifests


def test_resume_with_another_policy_is_refused_and_keeps_the_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert cli("run", "ledger", "-p", "random", "-n", "3", "--out", out).code == 0
    before = (out / "trajectories.jsonl").read_bytes()
    res = cli("run", "ledger", "-p", "oracle", "-n", "3", "--out", out, "--resume")
    assert res.code == 2, res.stderr
    assert len(res.error_lines) == 1 and "policy" in res.error_lines[0], res.stderr
    assert '"random"' in res.error_lines[0] and '"oracle"' in res.error_lines[0]
    assert (out / "trajectories.jsonl").read_bytes() == before
    assert json.loads((out / "summary.json").read_text())["policy"] == "random"


@pytest.mark.parametrize(
    ("flag", "value", "named"),
    [("--seed", "5", "seed"), ("--group", "2", "group"), ("--split", "all", "split")],
)
def test_resume_with_other_settings_names_each_field(
    tmp_path: Path, flag: str, value: str, named: str
) -> None:
    out = tmp_path / "run"
    assert cli("run", "ledger", "-n", "2", "--out", out).code == 0
    res = cli("run", "ledger", "-n", "2", flag, value, "--out", out, "--resume")
    assert res.code == 2 and f"{named}: was" in res.stderr, res.stderr


def test_rerun_without_resume_is_refused_and_overwrite_replaces(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert cli("run", "ledger", "-p", "oracle", "-n", "4", "--out", out).code == 0
    before = (out / "trajectories.jsonl").read_bytes()
    res = cli("run", "ledger", "-p", "random", "-n", "2", "--out", out)
    assert res.code == 2 and "--resume" in res.stderr and "--overwrite" in res.stderr
    assert (out / "trajectories.jsonl").read_bytes() == before
    (out / "notes.txt").write_text("mine")  # not a run file: --overwrite leaves it alone
    res = cli("run", "ledger", "-p", "random", "-n", "2", "--out", out, "--overwrite")
    assert res.code == 0, res.stderr
    eps = episodes(out)
    assert len(eps) == 2 and {e["policy_checkpoint"] for e in eps} == {"random"}
    assert (out / "notes.txt").read_text() == "mine"


def test_resume_may_grow_n_and_change_how_episodes_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert cli("run", "ledger", "-n", "2", "--out", out).code == 0
    res = cli("run", "ledger", "-n", "4", "-c", "2", "--max-retries", "0", "--out", out, "--resume")
    assert res.code == 0, res.stderr
    assert len(episodes(out)) == 4
    res = cli("run", "ledger", "-n", "3", "--out", out, "--resume")
    assert res.code == 2 and "n may grow" in res.stderr


def test_resume_and_overwrite_together_is_an_error(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert cli("run", "ledger", "-n", "1", "--out", out).code == 0
    res = cli("run", "ledger", "-n", "1", "--out", out, "--resume", "--overwrite")
    assert res.code == 2 and "contradict" in res.stderr


def test_eval_and_calibrate_refuse_a_mixed_resume(tmp_path: Path) -> None:
    out = tmp_path / "eval"
    assert cli("eval", "ledger", "-p", "random", "-n", "2", "--out", out).code == 0
    res = cli("eval", "ledger", "-p", "oracle", "-n", "2", "--out", out, "--resume")
    assert res.code == 2 and "policy: was" in res.stderr
    res = cli("calibrate", "ledger", "-p", "random", "-n", "2", "-K", "2", "--out", out)
    assert res.code == 2 and "already holds a run" in res.stderr
    res = cli("calibrate", "ledger", "-p", "random", "-n", "2", "-K", "2", "--out", out, "--resume")
    assert res.code == 2 and 'command: was "eval", now "calibrate"' in res.stderr


def test_a_changed_dataset_is_refused_on_resume(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", math_rows(3))
    out = tmp_path / "run"
    assert cli("run", "math", "--dataset", data, "--out", out).code == 0
    write_jsonl(data, math_rows(3)[::-1])  # same rows, another order: another file
    res = cli("run", "math", "--dataset", data, "--out", out, "--resume")
    assert res.code == 2 and "datasets: was" in res.stderr, res.stderr


def manifest(**run: object) -> dict[str, object]:
    spec = manifests.RunSpec(env="ledger", policy="oracle", n=4).model_dump()
    env = {"id": "ledger", "version": "1.0.0", "renderer_version": "1"}
    return {"run": {**spec, **run}, "env": env, "tasks": ["a", "b"], "datasets": []}


def test_fields_added_to_runspec_later_are_compared_without_code_changes() -> None:
    # a sampling setting another change adds to RunSpec: compared because it is not allowed
    old, new = manifest(temperature=0.7), manifest(temperature=1.0)
    assert manifests.resume_mismatches(old, new) == ["temperature: was 0.7, now 1.0"]
    assert "temperature" not in manifests.RESUME_MAY_DIFFER
    # a manifest written before a field existed counts as that field's default
    legacy = manifest()
    del legacy["run"]["epochs"]  # type: ignore[attr-defined]
    assert manifests.resume_mismatches(legacy, manifest()) == []
    assert manifests.resume_mismatches(legacy, manifest(group=2)) == ["group: was 1, now 2"]
    assert manifests.resume_mismatches(manifest(epochs=2), legacy) == [
        "epochs: was 2, now 1 (epochs may grow, not shrink)"
    ]


def test_env_version_and_dropped_tasks_are_refused() -> None:
    old = manifest()
    newer = {**manifest(), "env": {"id": "ledger", "version": "1.1.0", "renderer_version": "1"}}
    assert manifests.resume_mismatches(old, newer) == ['env version: was "1.0.0", now "1.1.0"']
    fewer = {**manifest(), "tasks": ["a", "c"]}
    (problem,) = manifests.resume_mismatches(old, fewer)
    assert problem.startswith("tasks: 1 of the run's tasks are not drawn now (first: b)")
    allowed = manifest(concurrency=8, backend="ray", episode_timeout=3.0, max_retries=0, n=9)
    assert manifests.resume_mismatches(old, allowed) == []


def test_demo_can_run_twice_into_its_directory(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    for _ in range(2):
        res = cli("demo", "-n", "2", "--out", out)
        assert res.code == 0, res.stderr
    assert len(episodes(out / "oracle")) == 2


def test_a_field_with_a_default_factory_counts_as_its_default(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from pydantic import Field

    class Later(manifests.RunSpec):  # a field another change adds, say stop sequences
        stop: list[str] = Field(default_factory=list)

    monkeypatch.setattr(manifests, "RunSpec", Later)
    legacy = manifest()  # written before the field existed
    grown = {
        **manifest(),
        "run": Later(env="ledger", policy="oracle", n=4, stop=["x"]).model_dump(),
    }
    assert manifests.resume_mismatches(legacy, grown) == ['stop: was [], now ["x"]']
    same = {**manifest(), "run": Later(env="ledger", policy="oracle", n=4).model_dump()}
    assert manifests.resume_mismatches(legacy, same) == []
