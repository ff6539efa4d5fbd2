"""Selecting the container backend where no engine is set up (these need no engine, so they
run in the default suite): one line naming `make containers`, before any episode runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gymforge.core.errors import ConfigError
from gymforge.sandbox import IsolationUnavailableError, get_backend
from gymforge.sandbox.docker import DockerBackend, docker_available
from gymforge.sandbox.docker_engine import _probe
from gymforge.settings import Settings

ROOT = Path(__file__).resolve().parents[3]


def cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = dict(os.environ, PYTHONPATH=str(ROOT), **env)
    full.pop("GYMFORGE_SANDBOX", None)
    full.update(env)
    return subprocess.run(
        [sys.executable, "-m", "gymforge.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=full,
        cwd=ROOT,
        check=False,
    )


def one_error_line(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def test_no_engine_is_one_line_naming_make_containers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GYMFORGE_DOCKER", str(tmp_path / "no-such-engine"))
    _probe.cache_clear()
    try:
        with pytest.raises(IsolationUnavailableError, match="make containers") as e:
            DockerBackend(workers=1)
        assert "\n" not in str(e.value) and "no-such-engine" in str(e.value)
        with pytest.raises(IsolationUnavailableError, match="make containers"):
            get_backend("docker", workers=1, unsafe_no_isolation=True)
        ok, why = docker_available()
        assert not ok and "make containers" in why
    finally:
        _probe.cache_clear()


@pytest.mark.parametrize("how", ["flag", "variable"])
def test_run_with_the_docker_sandbox_and_no_engine_fails_before_the_first_episode(
    tmp_path: Path, how: str
) -> None:
    out = tmp_path / "run"
    args = ["run", "code", "--policy", "oracle", "-n", "2", "--out", str(out)]
    env = {"GYMFORGE_DOCKER": str(tmp_path / "no-such-engine")}
    if how == "flag":
        args += ["--sandbox", "docker"]
    else:
        env["GYMFORGE_SANDBOX"] = "docker"
    one_error_line(cli(*args, **env), "make containers", "no-such-engine")
    assert not (out / "trajectories.jsonl").exists(), "an episode ran without a sandbox"


def test_grade_with_the_docker_sandbox_and_no_engine_is_refused(tmp_path: Path) -> None:
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"task_id": "code.strings/0", "answer": "x"}) + "\n")
    out = tmp_path / "verdicts.jsonl"
    proc = cli(
        *("grade", "code", "--answers", str(answers), "--out", str(out), "--sandbox", "docker"),
        GYMFORGE_DOCKER=str(tmp_path / "no-such-engine"),
    )
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "make containers" in proc.stderr
    assert not out.exists() or out.read_text() == ""


def test_an_unknown_backend_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GYMFORGE_SANDBOX", "vm")
    with pytest.raises(ConfigError, match=r"unknown sandbox backend 'vm'.*local or docker"):
        Settings.from_environ()
    monkeypatch.setenv("GYMFORGE_SANDBOX", "")
    assert Settings.from_environ().sandbox == "local"
    proc = cli("sandbox", "doctor", "--sandbox", "vm")
    one_error_line(proc, "unknown sandbox backend 'vm'")
