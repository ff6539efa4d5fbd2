"""Reading Harbor task directories without an engine: ids, families, splits, refusals."""

from __future__ import annotations

from pathlib import Path

import pytest
from harbor_helpers import DATASET, copy_fixture, minimal_task

from gymforge.core.errors import UserError
from gymforge.envs.harbor.images import mapped_dockerfile
from gymforge.envs.harbor.taskdir import (
    RULE_MIN_TASKS,
    dockerfile_facts,
    held_by_rule,
    read_dataset,
    read_task,
)
from gymforge.settings import parse_image_map


def test_the_fixture_dataset_reads_as_four_tasks_with_families_and_difficulties() -> None:
    tasks = {t.name: t for t in read_dataset(DATASET)}
    assert sorted(tasks) == ["crashing-test", "hello-shell", "multi-reward", "py-repo"]
    shell = tasks["hello-shell"]
    assert shell.family == "harbor.shell" and shell.difficulty == 1
    assert shell.task_id.startswith("harbor.hello-shell@") and len(shell.task_id) == 31
    assert shell.agent_timeout_sec == 120.0 and shell.verifier_timeout_sec == 60.0
    assert shell.resources.memory_mb == 512 and not shell.resources.allow_internet
    assert tasks["py-repo"].resources.memory_mb == 1024  # memory = "1G"
    assert tasks["crashing-test"].difficulty == 3 and tasks["py-repo"].difficulty == 2
    assert all(t.split == "train" for t in tasks.values())  # 4 tasks: the rule needs 5


def test_a_task_id_changes_with_any_file_and_only_then(tmp_path: Path) -> None:
    task = copy_fixture("hello-shell", tmp_path)
    first = read_task(task).task_id
    assert read_task(task).task_id == first
    (task / "tests" / "test.sh").write_text((task / "tests" / "test.sh").read_text() + "\n")
    assert read_task(task).task_id != first
    assert read_task(task).task_id.split("@")[0] == "harbor.hello-shell"


def test_one_task_directory_is_a_dataset_of_one() -> None:
    (only,) = read_dataset(DATASET / "py-repo")
    assert only.name == "py-repo" and only.has_solution


def test_held_out_tasks_come_from_metadata_a_list_or_the_documented_rule(tmp_path: Path) -> None:
    names = [f"task-{i}" for i in range(12)]
    for n in names:
        minimal_task(tmp_path / "rule" / n)
    by_rule = {t.name: t.split for t in read_dataset(tmp_path / "rule")}
    assert by_rule == {n: "heldout" if held_by_rule(n) else "train" for n in names}
    assert "heldout" in by_rule.values() and "train" in by_rule.values()

    for n in names[:RULE_MIN_TASKS]:
        minimal_task(tmp_path / "listed" / n)
    (tmp_path / "listed" / "heldout.txt").write_text("task-1\n\ntask-3\n")
    listed = {t.name: t.split for t in read_dataset(tmp_path / "listed")}
    assert [n for n, s in listed.items() if s == "heldout"] == ["task-1", "task-3"]

    minimal_task(tmp_path / "meta" / "a", {"task.toml": '[metadata]\nsplit = "heldout"\n'})
    minimal_task(tmp_path / "meta" / "b")
    assert {t.name: t.split for t in read_dataset(tmp_path / "meta")} == {
        "a": "heldout",
        "b": "train",
    }


@pytest.mark.parametrize(
    ("overrides", "remove", "message"),
    [
        ({}, "tests/test.sh", "no tests/test.sh"),
        ({}, "instruction.md", "no instruction.md"),
        ({}, "environment/Dockerfile", "no environment/Dockerfile"),
        ({"environment/docker-compose.yaml": "services: {}\n"}, "", "compose"),
        ({"task.toml": "[metadata\n"}, "", "not valid TOML"),
        ({"task.toml": '[environment]\nmemory = "lots"\n'}, "", "is not a size"),
        ({"task.toml": "[verifier]\ntimeout_sec = -1\n"}, "", "positive number"),
        ({"task.toml": '[metadata]\nsplit = "test"\n'}, "", "split must be"),
        ({"task.toml": '[environment]\nallow_internet = "yes"\n'}, "", "true or false"),
    ],
)
def test_a_broken_task_is_refused_in_one_line_naming_the_file(
    tmp_path: Path, overrides: dict[str, str], remove: str, message: str
) -> None:
    task = minimal_task(tmp_path / "t", overrides)
    if remove:
        (task / remove).unlink()
    with pytest.raises(UserError, match=message) as err:
        read_task(task)
    assert "\n" not in str(err.value)


def test_a_heldout_list_naming_no_task_is_refused(tmp_path: Path) -> None:
    minimal_task(tmp_path / "a")
    (tmp_path / "heldout.txt").write_text("a\nnope\n")
    with pytest.raises(UserError, match="names no task here: nope"):
        read_dataset(tmp_path)


def test_dockerfile_bases_exclude_stages_and_workdir_follows_relative_steps() -> None:
    text = (
        "FROM python:3.12 AS build\nRUN make\nFROM --platform=linux/amd64 debian:12\n"
        "COPY --from=build /x /x\nFROM build\nWORKDIR /srv\nWORKDIR app\n"
    )
    assert dockerfile_facts(text) == (["python:3.12", "debian:12"], "/srv/app")
    assert dockerfile_facts("FROM scratch\n") == ([], "/app")


def test_the_image_map_rewrites_only_the_named_from_images() -> None:
    mapping = dict(parse_image_map("python:3.12=local-py, debian:12=local-deb"))
    out = mapped_dockerfile(
        "FROM python:3.12 AS b\nFROM python:3.12-slim\nRUN echo python:3.12\n", mapping
    )
    assert out == "FROM local-py AS b\nFROM python:3.12-slim\nRUN echo python:3.12\n"
    with pytest.raises(UserError, match="FROM=LOCAL"):
        parse_image_map("python:3.12")


def test_a_task_gets_the_network_only_when_the_operator_grants_it() -> None:
    """``allow_internet`` is the task's request; ``GYMFORGE_HARBOR_NETWORK`` the grant (the
    engine's network reaches the host's services: ``test_harbor_network_reaches_host``)."""
    from dataclasses import replace

    from gymforge.envs.harbor.container import networked
    from gymforge.settings import Settings
    from gymforge.verify.services import RunServices

    shell = {t.name: t for t in read_dataset(DATASET)}["hello-shell"]
    asks = replace(shell, resources=replace(shell.resources, allow_internet=True))
    granted = Settings.from_environ({"GYMFORGE_HARBOR_NETWORK": "1"})
    assert granted.harbor_network and not Settings.from_environ({}).harbor_network
    with RunServices(granted).activate():
        assert networked(asks) and not networked(shell)
    with RunServices(Settings()).activate():
        assert not networked(asks)
