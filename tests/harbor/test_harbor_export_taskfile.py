"""``swe`` task files (``command`` mode: a repository, hidden test files and a hidden test
command) exported with ``tasks export swe --dataset``: the hidden tests, ``swe``'s own
hidden-run runner and its boot files go to the verifier (owner-only); the exported verifier
run directly (no engine: in one job of gymforge's sandbox) gives ``swe``'s verdict on the
oracle's fix, no change, a wrong change, a protected test edited and a hidden test planted
in the workspace; and on the container engine, ``harbor:DIR`` gives ``swe``'s verdicts."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from harbor_helpers import IMAGE_MAP, READY, WHY, cli_env, judge_in_sandbox

from gymforge.core.types import Action, Reply, ToolCall
from gymforge.envs.swe import SweEnv
from gymforge.registry.resolve import make_env
from gymforge.sandbox.doctor import bwrap_works

BUGGY = "def mean(xs):\n    return sum(xs) / (len(xs) - 1)\n"
FIXED = "def mean(xs):\n    return sum(xs) / len(xs)\n"
VISIBLE = (
    "import unittest\nfrom calc.ops import mean\n\n\nclass T(unittest.TestCase):\n"
    "    def test_runs(self):\n        self.assertIsInstance(mean([1.0, 2.0]), float)\n"
)
HIDDEN = (
    "import unittest\nfrom calc.ops import mean\n\n\nclass H(unittest.TestCase):\n"
    "    def test_mean(self):\n        self.assertEqual(mean([1, 2, 3]), 2)\n"
    "        self.assertEqual(mean([4]), 4)\n"
)
PASSING = (
    "import unittest\n\n\nclass H(unittest.TestCase):\n    def test_mean(self):\n        pass\n"
)


def _write(root: Path, files: dict[str, str]) -> None:
    for p, t in files.items():
        (root / p).parent.mkdir(parents=True, exist_ok=True)
        (root / p).write_text(t)


@pytest.fixture
def task_file(tmp_path: Path) -> Path:
    repo = {"calc/__init__.py": "", "tests/test_ops.py": VISIBLE}
    _write(tmp_path / "repos/calc", {**repo, "calc/ops.py": BUGGY})
    _write(tmp_path / "repos/calc-fixed", {**repo, "calc/ops.py": FIXED})
    _write(tmp_path / "hidden/calc-1", {"hidden/test_hidden.py": HIDDEN})
    row = {
        "task_id": "calc-1",
        "repo": "repos/calc",
        "title": "mean() is wrong",
        "issue": "mean([1, 2, 3]) returns 3.0 but the mean is 2.",
        "visible_command": "python -m unittest discover -s tests",
        "hidden_command": "python -m unittest discover -s hidden",
        "hidden_tests": "hidden/calc-1",
        "solution": "repos/calc-fixed",
    }
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps(row) + "\n")
    return path


def export(task_file: Path, out: Path) -> Path:
    p = subprocess.run(
        [sys.executable, "-m", "gymforge.cli", "tasks", "export", "swe", "--dataset",
         str(task_file), "--out", str(out), "-n", "5"],
        capture_output=True, text=True, env=cli_env(), timeout=300, check=False,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
    (task,) = [Path(line) for line in p.stdout.splitlines()]
    return task


# (gymforge actions, the same change made to an /app copy); the oracle is each side's own
EDIT = ToolCall(name="edit_file", arguments={"path": "calc/ops.py", "old": "- 1)", "new": "- 2)"})
PLANT = ToolCall(
    name="create_file", arguments={"path": "hidden/test_hidden.py", "content": PASSING}
)
PROTECTED = ToolCall(
    name="edit_file",
    arguments={"path": "tests/test_ops.py", "old": "assertIsInstance", "new": "assertIsNotNone"},
)
PLAYS: dict[str, tuple[list[Action] | None, Callable[[Path], Any] | None]] = {
    "oracle": (None, None),
    "noop": ([], lambda ws: None),
    "wrong": ([EDIT], lambda ws: (ws / "calc/ops.py").write_text(BUGGY.replace("- 1)", "- 2)"))),
    "planted_hidden_test": (
        [EDIT, PLANT],
        lambda ws: [
            (ws / "calc/ops.py").write_text(BUGGY.replace("- 1)", "- 2)")),
            _write(ws, {"hidden/test_hidden.py": PASSING}),
        ],
    ),
    "protected": (
        [EDIT, PROTECTED],
        lambda ws: [
            (ws / "calc/ops.py").write_text(FIXED),
            (ws / "tests/test_ops.py").write_text(VISIBLE.replace("IsInstance", "IsNotNone")),
        ],
    ),
}


def swe_verdicts(task_file: Path) -> dict[str, bool]:
    async def go() -> dict[str, bool]:
        env = SweEnv()
        env.use_dataset(env.load_dataset(task_file))
        out = {}
        for label, (actions, _) in PLAYS.items():
            await env.reset("calc-1", 0)
            plan = actions if actions is not None else env.oracle_plan(env.task)  # type: ignore[arg-type]
            assert plan is not None
            for a in [*plan, Reply(text="done")]:
                r = await env.step(a)
                if r.terminated or r.truncated:
                    out[label] = bool(r.info["verdict"]["passed"])
                    break
        await env.close()
        return out

    return asyncio.run(go())


@pytest.mark.skipif(not bwrap_works()[0], reason="bubblewrap unavailable")
def test_the_exported_verifier_run_directly_gives_swes_verdicts(
    task_file: Path, tmp_path: Path
) -> None:
    task = export(task_file, tmp_path / "out")
    for part in ("tests", "solution"):
        assert all(p.stat().st_mode & 0o077 == 0 for p in (task / part).rglob("*"))
    assert (task / "tests" / "hidden" / "hidden" / "test_hidden.py").read_text() == HIDDEN
    assert (task / "tests" / "boot" / ".gf-boot" / "sitecustomize.py").is_file()
    assert not (task / "environment" / "repo" / "hidden").exists()
    spec = json.loads((task / "tests" / "spec.json").read_text())
    assert spec["kind"] == "swe-command" and spec["argv"][:3] == ["python", "-m", "unittest"]
    solve = (task / "solution" / "solve.sh").read_text()
    got = {}
    for label, (_, change) in PLAYS.items():
        ws = tmp_path / label / "app"
        shutil.copytree(task / "environment" / "repo", ws)
        if change is None:
            cmd = ["bash", "-c", solve.replace("/app", str(ws))]
            subprocess.run(cmd, check=True, timeout=60)
        else:
            change(ws)
        files = {p.relative_to(ws).as_posix(): p.read_bytes() for p in ws.rglob("*") if p.is_file()}
        got[label] = judge_in_sandbox(task, files) == {"reward.txt": b"1\n"}
    assert got == swe_verdicts(task_file)
    assert got == {label: label == "oracle" for label in PLAYS}


def as_shell(a: Action) -> Action:
    """``swe``'s editor call as the Harbor shell's (the same change to the file)."""
    assert isinstance(a, ToolCall)
    args = dict(a.arguments)
    if a.name != "edit_file":
        return ToolCall(name="write_file", arguments=args)
    edit = (
        f"import pathlib; p = pathlib.Path({args['path']!r}); "
        f"p.write_text(p.read_text().replace({args['old']!r}, {args['new']!r}))"
    )
    return ToolCall(name="run", arguments={"command": f'python3 -c "{edit}"', "timeout": 30})


@pytest.mark.containers
@pytest.mark.skipif(not READY, reason=WHY)
def test_the_round_trip_of_a_task_file_gives_swes_verdicts(
    task_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GYMFORGE_HARBOR_IMAGE_MAP", IMAGE_MAP)
    task = export(task_file, tmp_path / "out")
    harbor = make_env(f"harbor:{task}")

    async def go() -> dict[str, bool]:
        out = {}
        (tid,) = harbor.harbor_tasks  # type: ignore[attr-defined]
        for label, (actions, _) in PLAYS.items():
            await harbor.reset(tid, 0)
            plan = [as_shell(a) for a in actions or []]
            if actions is None:
                plan = harbor.oracle_plan(harbor.task) or []  # type: ignore[attr-defined]
            for a in [*plan, Reply(text="done")]:
                r = await harbor.step(a)
                if r.terminated or r.truncated:
                    out[label] = bool(r.info["verdict"]["passed"])
                    break
        await harbor.close()
        return out

    assert asyncio.run(go()) == swe_verdicts(task_file)
