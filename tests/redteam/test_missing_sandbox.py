"""Attack (by circumstance): run the code environment on a machine whose sandbox cannot start.

Without bubblewrap (or with a configured binary that does not exist, or without the compiler
a dataset's tasks need), every episode used to end as a verifier error while the run itself
"succeeded": exit 0, 0% success, zero reward everywhere. A trainer fed that learns nothing and
nobody is told. Success of this attack means a run starts (or writes anything) although its
verifier cannot work; the defence is one line naming what is missing, before any episode.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gymforge.core import SyncEnvironment
from gymforge.envs.code import CodeEnv
from gymforge.envs.code.agent import CodeAgentEnv
from gymforge.sandbox import IsolationUnavailableError
from gymforge.sandbox.doctor import bwrap_works
from gymforge.sandbox.languages import get_language
from gymforge.sandbox.preflight import missing_tool


def _assert_refused(proc: Any, out: Path, *needles: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    for needle in ("gymforge sandbox doctor", *needles):
        assert needle in lines[0], lines[0]
    assert not (out / "trajectories.jsonl").exists(), "an episode ran without a sandbox"


@pytest.mark.parametrize("how", ["path", "config"])
def test_run_code_without_bubblewrap_fails_before_the_first_episode(
    gymforge_cli: Any, path_without: Any, tmp_path: Path, how: str
) -> None:
    env: dict[str, str | None] = (
        {"PATH": path_without("bwrap"), "GYMFORGE_BWRAP": None}
        if how == "path"
        else {"GYMFORGE_BWRAP": str(tmp_path / "no-such-bwrap")}
    )
    env["GYMFORGE_UNSAFE_NO_ISOLATION"] = None
    out = tmp_path / "run"
    proc = gymforge_cli("run", "code", "--policy", "oracle", "-n", "2", "--out", str(out), env=env)
    _assert_refused(proc, out, "bubblewrap" if how == "path" else "no-such-bwrap")


def test_grade_code_without_bubblewrap_is_refused(
    gymforge_cli: Any, path_without: Any, tmp_path: Path
) -> None:
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"task_id": "code.strings/0", "answer": "x"}) + "\n")
    out = tmp_path / "verdicts.jsonl"
    proc = gymforge_cli(
        "grade",
        "code",
        "--answers",
        str(answers),
        "--out",
        str(out),
        env={"PATH": path_without("bwrap"), "GYMFORGE_UNSAFE_NO_ISOLATION": None},
    )
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "gymforge sandbox doctor" in proc.stderr and "bubblewrap" in proc.stderr
    assert not out.exists() or out.read_text() == ""


def test_a_dataset_whose_compiler_is_missing_is_refused_before_any_episode(
    gymforge_cli: Any, path_without: Any, tmp_path: Path
) -> None:
    if missing_tool(get_language("cpp")) is not None or not bwrap_works()[0]:
        pytest.skip("needs a working sandbox and g++ here (only g++ is taken away)")
    dataset = tmp_path / "tasks.jsonl"
    row = {
        "task_id": "io/1",
        "prompt": "Print the sum of two integers.",
        "language": "cpp",
        "tests": [{"input": "1 2\n", "output": "3\n"}],
    }
    dataset.write_text(json.dumps(row) + "\n")
    out = tmp_path / "run"
    proc = gymforge_cli(
        "run",
        "code",
        "--dataset",
        str(dataset),
        "-n",
        "1",
        "--out",
        str(out),
        env={"PATH": path_without("g++")},
    )
    _assert_refused(proc, out, "'g++' is not installed", "cpp")


def test_listing_environments_needs_no_sandbox(gymforge_cli: Any, tmp_path: Path) -> None:
    proc = gymforge_cli("list", "--json", env={"GYMFORGE_BWRAP": str(tmp_path / "no-bwrap")})
    assert proc.returncode == 0, proc.stderr
    assert {"code", "code-agent"} <= {row["id"] for row in json.loads(proc.stdout)}


@pytest.mark.parametrize("env_cls", [CodeEnv, CodeAgentEnv])
def test_a_library_user_gets_the_same_line_at_the_first_reset(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, env_cls: type
) -> None:
    monkeypatch.setenv("GYMFORGE_BWRAP", str(tmp_path / "no-bwrap"))
    monkeypatch.delenv("GYMFORGE_UNSAFE_NO_ISOLATION", raising=False)
    bwrap_works.cache_clear()
    try:
        env = SyncEnvironment(env_cls())
        task_id = next(iter(env.env.tasks.sample(1, seed=0)))
        with pytest.raises(IsolationUnavailableError, match="gymforge sandbox doctor"):
            env.reset(task_id, 0)
        env.close()
    finally:
        bwrap_works.cache_clear()
