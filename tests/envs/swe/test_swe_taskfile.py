"""swe task files: repositories from directories and tarballs, the pin covering them, bad
rows reported by line while the others load, and the weaker post-submit mode for hidden test
commands (recorded in the verdict; protected and hidden files are the judge's own)."""

from __future__ import annotations

import asyncio
import io
import json
import tarfile
from pathlib import Path
from typing import Any

import pytest
from swe_helpers import call, result

from gymforge.core.types import Action, Reply
from gymforge.envs.swe import SweEnv, load_task_file
from gymforge.sandbox.doctor import bwrap_works

needs_sandbox = pytest.mark.skipif(not bwrap_works()[0], reason="bubblewrap unavailable")

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


def _write(root: Path, files: dict[str, str]) -> None:
    for p, t in files.items():
        (root / p).parent.mkdir(parents=True, exist_ok=True)
        (root / p).write_text(t)


def _repo(ops: str) -> dict[str, str]:
    return {"calc/__init__.py": "", "calc/ops.py": ops, "tests/test_ops.py": VISIBLE}


def _tar(files: dict[str, str], top: str = "calc-1.0") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for p, t in files.items():
            data = t.encode()
            info = tarfile.TarInfo(f"{top}/{p}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _row(**over: Any) -> dict[str, Any]:
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
    return {**row, **over}


@pytest.fixture
def task_file(tmp_path: Path) -> Path:
    _write(tmp_path / "repos/calc", _repo(BUGGY))
    _write(tmp_path / "repos/calc-fixed", _repo(FIXED))
    _write(tmp_path / "hidden/calc-1", {"hidden/test_hidden.py": HIDDEN})
    (tmp_path / "repos/calc.tar.gz").write_bytes(_tar(_repo(BUGGY)))
    rows = [
        _row(),
        _row(task_id="calc-tar", repo="repos/calc.tar.gz"),
        _row(task_id="missing", repo="repos/nope"),
        {"task_id": "typo", "repo": "repos/calc", "isue": "x"},
    ]
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_rows_load_from_directories_and_tarballs_and_bad_rows_say_why(task_file: Path) -> None:
    ds = load_task_file(task_file)
    assert [t.task_id for t in ds.tasks] == ["calc-1", "calc-tar"]
    a, b = (t.truth for t in ds.tasks)
    assert a["files"] == b["files"]  # the tarball's top directory is read from inside
    assert a["mode"] == "command" and a["hidden_files"] == {"hidden/test_hidden.py": HIDDEN}
    assert [s["op"] for s in a["fix"]] == ["edit"]
    assert len(ds.errors) == 2
    assert ds.errors[0].startswith("tasks.jsonl:3: ") and "repos/nope" in ds.errors[0]
    assert ds.errors[1].startswith("tasks.jsonl:4: ")


def test_the_pin_covers_the_referenced_repositories(task_file: Path) -> None:
    before = load_task_file(task_file).content_hash
    assert load_task_file(task_file).content_hash == before
    ops = task_file.parent / "repos/calc/calc/ops.py"
    ops.write_text(BUGGY + "# touched\n")
    touched = load_task_file(task_file).content_hash
    assert touched != before
    ops.write_text(BUGGY)
    assert load_task_file(task_file).content_hash == before
    (task_file.parent / "repos/calc.tar.gz").write_bytes(_tar(_repo(BUGGY), top="calc-1.1"))
    assert load_task_file(task_file).content_hash != before


def test_binary_files_and_links_are_refused_by_line(tmp_path: Path) -> None:
    _write(tmp_path / "repos/calc", _repo(BUGGY))
    (tmp_path / "repos/calc/logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    _write(tmp_path / "repos/ok", _repo(BUGGY))
    path = tmp_path / "t.jsonl"
    path.write_text(
        json.dumps(_row(hidden_tests=None, solution=None))
        + "\n"
        + json.dumps(_row(task_id="ok", repo="repos/ok", hidden_tests=None, solution=None))
        + "\n"
    )
    ds = load_task_file(path)
    assert [t.task_id for t in ds.tasks] == ["ok"]
    assert "logo.png is not UTF-8 text" in ds.errors[0]


def _play(task_file: Path, tid: str, actions: list[Action]) -> list[Any]:
    async def go() -> list[Any]:
        env = SweEnv()
        env.use_dataset(env.load_dataset(task_file))
        await env.reset(tid, 0)
        steps = []
        for a in actions:
            steps.append(await env.step(a))
            if steps[-1].done:
                break
        return steps

    return asyncio.run(go())


def _oracle(task_file: Path, tid: str) -> list[Action]:
    env = SweEnv()
    env.use_dataset(env.load_dataset(task_file))
    return list(env.oracle_plan(env.tasks.resolve(tid)) or [])


@needs_sandbox
def test_post_submit_mode_judges_the_hidden_command_and_says_it_is_weaker(task_file: Path) -> None:
    plan = _oracle(task_file, "calc-1")
    steps = _play(task_file, "calc-1", plan)
    visible = result(steps[1])["result"]
    assert visible["passed"] == 1 and visible["exit_code"] == 0
    v = steps[-1].info["verdict"]
    assert v["passed"], v
    assert v["facts"]["mode"] == "post_submit_command" and v["facts"]["weaker_mode"] is True
    assert v["facts"]["hidden_tests"] == {"hidden_command": True}
    noop = _play(task_file, "calc-1", [Reply(text="done")])[-1].info["verdict"]
    assert not noop["passed"] and noop["facts"]["weaker_mode"] is True


@needs_sandbox
def test_post_submit_mode_uses_the_judges_files_not_the_agents(task_file: Path) -> None:
    fake = (
        "import unittest\n\n\nclass H(unittest.TestCase):\n    def test_ok(self):\n        pass\n"
    )
    hooks = "import calc.ops\ncalc.ops.mean = lambda xs: 2\n"
    attack: list[Action] = [
        call("create_file", path="hidden/test_hidden.py", content=fake),
        call("create_file", path="sitecustomize.py", content=hooks),
        call("create_file", path="usercustomize.py", content=hooks),
        Reply(text="done"),
    ]
    v = _play(task_file, "calc-1", attack)[-1].info["verdict"]
    assert not v["passed"] and v["reason"] == "no_change"  # every change was left out
    assert v["facts"]["dropped_changes"] == [
        "hidden/test_hidden.py",
        "sitecustomize.py",
        "usercustomize.py",
    ]
    # the real fix with a test weakened: protected, fails whatever the tests say
    plan = _oracle(task_file, "calc-1")
    weaken = call("edit_file", path="tests/test_ops.py", old="assertIsInstance", new="assertTrue")
    v = _play(task_file, "calc-1", [*plan[:-1], weaken, plan[-1]])[-1].info["verdict"]
    assert not v["passed"] and v["facts"]["protected_changed"] == ["tests/test_ops.py"]


@needs_sandbox
def test_a_hidden_run_that_rewrites_the_judges_files_is_refused(task_file: Path) -> None:
    """The real fix, but the package rewrites a protected test file on disk when imported
    (during the hidden run): the kernel refuses the write, so the import fails, and the
    files come back as the judge laid them."""
    plan = _oracle(task_file, "calc-1")
    rewrite = "open('tests/test_ops.py', 'w').write('# gone\\n')\n"
    tamper = call("create_file", path="calc/_boot.py", content=rewrite)
    hook = call(
        "run_command", command="sh -c \"printf 'import calc._boot\\\\n' > calc/__init__.py\""
    )
    steps = _play(task_file, "calc-1", [*plan[:-1], tamper, hook, plan[-1]])
    v = steps[-1].info["verdict"]
    assert v["facts"]["agent_files_read_only"] is True
    assert v["facts"]["hidden_status"] == "runtime_error"
    assert v["facts"]["tampered_during_run"] == []
    assert not v["passed"] and v["reason"] == "hidden_tests_failed"


def test_files_that_come_back_changed_fail_the_run_whatever_it_exited_with(
    task_file: Path,
) -> None:
    """The second lock, for a sandbox that let a write through: the judge compares the files
    the job handed back with the ones it laid."""
    from gymforge.envs.swe.build import built_tree
    from gymforge.envs.swe.judging import _command
    from gymforge.envs.swe.truth import SweTruth
    from gymforge.sandbox import Result, Status

    class Leaky:
        async def arun(self, job: Any) -> Result:
            assert job.read_only_files and job.keep_files
            files = {p: (d if isinstance(d, bytes) else d.encode()) for p, d in job.files.items()}
            files["tests/test_ops.py"] = b"# gone\n"
            return Result(status=Status.OK, exit_code=0, files=files)

    class Judge:
        backend = Leaky()

    truth = SweTruth.model_validate(load_task_file(task_file).tasks[0].truth)
    judge: Any = Judge()
    built = built_tree(truth.files, truth.files, truth.protected, truth.hidden_files)
    ok, status, tampered = asyncio.run(_command(judge, truth, built))
    assert (ok, status, tampered) == (False, "ok", ["tests/test_ops.py"])


HIDDEN_FIRST = (
    "import unittest\nimport calc.ops\n\n\nclass A(unittest.TestCase):\n"
    "    def test_imports(self):\n        pass\n"
)
REWRITE_AND_RESTORE = (
    "import atexit, os\n"
    "target = os.path.join('hidden', 'test_mean.py')\n"
    "try:\n"
    "    original = open(target).read()\n"
    "    open(target, 'w').write('import unittest\\n\\n\\nclass H(unittest.TestCase):\\n'\n"
    "                            '    def test_mean(self):\\n        pass\\n')\n"
    "    atexit.register(lambda: open(target, 'w').write(original))\n"
    "except OSError:\n"
    "    pass\n"
)


@needs_sandbox
def test_a_hidden_run_cannot_rewrite_a_test_and_put_it_back(tmp_path: Path) -> None:
    """No fix. The package, imported by the first hidden test file, rewrites the second one to
    pass and restores it at exit, so the files handed back look untouched. The agent's files
    and the judge's are read-only during the hidden run: the rewrite is refused and the real
    test runs."""
    _write(tmp_path / "repos/calc", _repo(BUGGY))
    hidden = {"hidden/test_a_first.py": HIDDEN_FIRST, "hidden/test_mean.py": HIDDEN}
    _write(tmp_path / "hidden/calc-2", hidden)
    path = tmp_path / "tasks.jsonl"
    row = _row(task_id="calc-2", hidden_tests="hidden/calc-2", solution=None)
    path.write_text(json.dumps(row) + "\n")
    attack: list[Action] = [
        call("create_file", path="calc/_boot.py", content=REWRITE_AND_RESTORE),
        call("run_command", command="sh -c \"printf 'import calc._boot\\\\n' > calc/__init__.py\""),
        Reply(text="done"),
    ]
    v = _play(path, "calc-2", attack)[-1].info["verdict"]
    assert v["facts"]["agent_files_read_only"] is True
    assert v["facts"]["tampered_during_run"] == []
    assert v["facts"]["hidden_status"] == "runtime_error"  # the real test_mean ran and failed
    assert not v["passed"] and v["reason"] == "hidden_tests_failed"


@needs_sandbox
def test_without_landlock_a_post_submit_task_refuses_to_start(
    task_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gymforge.sandbox import IsolationUnavailableError, landlock

    monkeypatch.setattr(landlock, "landlock_abi", lambda: 0)
    env = SweEnv()
    env.use_dataset(env.load_dataset(task_file))
    with pytest.raises(IsolationUnavailableError, match="Landlock"):
        asyncio.run(env.reset("calc-1", 0))
    generated = SweEnv()  # plain-value calls need no read-only files
    obs = asyncio.run(generated.reset("swe.bugfix/v1/d2/s4", 0))
    assert obs.data["family"] == "swe.bugfix"
