"""``gymforge tasks export ENV --format harbor``: the files, read back by ``harbor:``; the
verifier script's rules without an engine; and, on the container engine, the round trip:
``harbor:DIR`` gives the verdicts the original environment gives, on the oracle, a no-op and
a wrong answer, for ``swe``, ``code`` and ``code-agent`` (and, for the code kinds, the same
reward components, ``step_cost`` aside)."""

from __future__ import annotations

import ast
import asyncio
import builtins
import json
import shutil
import subprocess
import symtable
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from harbor_helpers import IMAGE_MAP, cli_env, judge_in_sandbox

from gymforge.core.types import Action, Reply, ToolCall
from gymforge.envs.harbor.taskdir import read_dataset
from gymforge.integrations.harbor_export import EXPORTERS, NOT_EXPORTED, judge_script, refusal
from gymforge.integrations.harbor_export.common import _defined_once, _part, judge_source
from gymforge.registry.resolve import ADAPTERS, BUILTIN, make_env
from gymforge.verify.code import shared


def export(env: str, out: Path, n: int = 2) -> list[Path]:
    p = subprocess.run(
        [sys.executable, "-m", "gymforge.cli", "tasks", "export", env, "--format", "harbor",
         "--out", str(out), "-n", str(n)],
        capture_output=True, text=True, env=cli_env(), timeout=300, check=False,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr[-2000:]
    return [Path(line) for line in p.stdout.splitlines()]


EXPORTED = ["swe", "code", "code-agent"]

Exports = Callable[[str], tuple[Path, list[Path]]]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Exports:
    """``exported(env)``: ``(directory, written task paths)`` of one two-task export of
    ``env``, made once per module (each is a CLI run); the tests only read it, or copy from it."""
    made: dict[str, tuple[Path, list[Path]]] = {}

    def get(env: str) -> tuple[Path, list[Path]]:
        if env not in made:
            out = tmp_path_factory.mktemp("harbor-export") / env
            made[env] = (out, export(env, out))
        return made[env]

    return get


@pytest.mark.parametrize("env", EXPORTED)
def test_an_export_reads_back_as_harbor_tasks_naming_their_source(
    env: str, exported: Exports
) -> None:
    out, written = exported(env)
    assert len(written) == 2
    tasks = read_dataset(out)
    assert [t.root for t in tasks] == sorted(written)
    for t in tasks:
        assert t.has_solution and t.metadata["gymforge_env"] == env
        assert str(t.metadata["gymforge_task_id"]).startswith(f"{env.removesuffix('-agent')}.")
        judge = (t.root / "tests" / "judge.py").read_text()
        assert judge.startswith('"""The verifier gymforge') and "def strict_equal(" in judge
        assert "import gymforge" not in judge and "from gymforge" not in judge


@pytest.mark.parametrize("env", EXPORTED)
def test_what_the_agent_must_not_read_is_owner_only_and_not_in_the_image(
    env: str, exported: Exports
) -> None:
    task = exported(env)[1][0]
    for part in ("tests", "solution"):
        for p in [task / part, *(task / part).rglob("*")]:
            assert p.stat().st_mode & 0o077 == 0, p  # the verifier's candidate user reads none
    context = {
        p.relative_to(task / "environment").as_posix(): p for p in (task / "environment").rglob("*")
    }
    hidden = json.loads((task / "tests" / "spec.json").read_text())
    dockerfile = context.pop("Dockerfile").read_text()
    assert all(
        line.split()[1].rstrip("/") in {"repo", "gymforge"}
        for line in dockerfile.splitlines()
        if line.startswith("COPY")
    )
    assert not any(".git" in rel.split("/") for rel in context)
    solve = (task / "solution" / "solve.sh").read_text()
    for rel, p in context.items():
        if p.is_file() and rel.startswith("gymforge/"):
            if rel.endswith("spec.json"):  # code-agent's visible tests: only what the prompt shows
                shown = json.loads(p.read_text())["checks"]
                assert shown == hidden["checks"][: len(shown)] and len(shown) < len(
                    hidden["checks"]
                )
                prompt = (task / "instruction.md").read_text()
                assert all(repr(c["expected"]) in prompt for c in shown)
            assert "reference" not in p.read_text()
    if env != "swe":  # the reference is nowhere in the image
        assert not any(
            p.is_file() and solve.split("<<'GYMFORGE_EOF'\n")[1][:40] in p.read_text()
            for p in context.values()
        )


def test_code_agents_visible_test_command_runs_the_shown_examples(
    tmp_path: Path, exported: Exports
) -> None:
    task = exported("code-agent")[1][0]
    ws = tmp_path / "ws"
    ws.mkdir()
    body = (task / "solution" / "solve.sh").read_text().split("<<'GYMFORGE_EOF'\n")[1]
    (ws / "solution.py").write_text(body.split("GYMFORGE_EOF")[0])
    cmd = [sys.executable, "-I", str(task / "environment" / "gymforge" / "judge.py"), "--report",
           "--as-self", "--workspace", str(ws), "--logs", str(tmp_path / "logs")]  # fmt: skip
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert p.returncode == 0 and "2/2 checks passed" in p.stdout, p.stdout + p.stderr
    assert not (tmp_path / "logs").exists()  # --report writes no reward
    (ws / "solution.py").write_text("")
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert "0/2 checks passed" in p.stdout and "hidden checks failed" in p.stdout


def test_export_refuses_other_envs_and_a_used_directory(tmp_path: Path, exported: Exports) -> None:
    bad = subprocess.run(
        [sys.executable, "-m", "gymforge.cli", "tasks", "export", "ledger", "--out", str(tmp_path)],
        capture_output=True, text=True, env=cli_env(), timeout=120, check=False,
    )  # fmt: skip
    assert bad.returncode != 0 and "supports swe, code, code-agent, not 'ledger'" in bad.stderr
    assert "judged on the transfers made through its tools" in bad.stderr
    used = exported("code")[0]
    before = tree(used)
    again = subprocess.run(
        [sys.executable, "-m", "gymforge.cli", "tasks", "export", "code", "--out",
         str(used), "-n", "1"],
        capture_output=True, text=True, env=cli_env(), timeout=120, check=False,
    )  # fmt: skip
    assert again.returncode != 0 and "exists" in again.stderr
    assert tree(used) == before  # the refusal wrote nothing into the used directory


def test_every_environment_has_a_decision_and_a_refusal_names_its_reason() -> None:
    """A new built-in environment or adapter must say whether it exports, and why not."""
    prefixes = {p.removesuffix(":") for p in ADAPTERS}
    assert set(BUILTIN) | prefixes <= set(EXPORTERS) | set(NOT_EXPORTED)
    assert not set(EXPORTERS) & set(NOT_EXPORTED)
    for env_id, why in NOT_EXPORTED.items():
        assert refusal(f"{env_id}:x" if env_id in prefixes else env_id).endswith(f": {why}")


def test_the_exported_judge_is_one_file_that_defines_every_name_it_uses() -> None:
    """Its parts are inlined whole (``judge_source``): a name one of them uses that the file
    does not define (a part left out, a constant not carried) fails here, not in a task."""
    source = judge_source()
    table = symtable.symtable(source, "judge.py", "exec")
    defined = {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported()}
    used: set[str] = set()
    scopes = list(table.get_children())
    while scopes:
        scope = scopes.pop()
        scopes += scope.get_children()
        used |= {s.get_name() for s in scope.get_symbols() if s.is_global() and s.is_referenced()}
    used |= {s.get_name() for s in table.get_symbols() if s.is_referenced()}
    assert used - defined - set(dir(builtins)) == {"__file__"}  # Python sets it on a run
    assert {"CANDIDATE", "CHILD", "run_calls", "as_candidate", "build", "strict_equal"} <= defined
    roots: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            roots.add(str(node.module).split(".")[0])
    assert roots <= sys.stdlib_module_names | {"__future__"}


def test_a_part_with_a_statement_among_its_imports_is_refused_not_cut(tmp_path: Path) -> None:
    """``judge_source`` inlines a part from after its imports: a statement among them (a
    setting such as ``os.umask``, a constant) would be left out of the exported judge without
    a word, the package's judge and the exported one then differing; such a part is refused."""
    path = tmp_path / "part_probe.py"
    module = types.ModuleType("part_probe")
    module.__file__ = str(path)
    uses = {("os", None, None), ("sys", None, None)}
    body = "\n\ndef width() -> int:\n    return len(sys.argv) + len(os.sep)\n"
    path.write_text('"""A part."""\n\nimport os\n\nos.umask(0o077)\n\nimport sys\n' + body)
    with pytest.raises(AssertionError, match="a statement before its imports end"):
        _part(module, uses)
    path = tmp_path / "part_probe_ordered.py"  # a new file: linecache keeps the old one
    module.__file__ = str(path)
    path.write_text('"""A part."""\n\nimport os\nimport sys\n\nos.umask(0o077)\n' + body)
    kept = _part(module, uses)
    assert kept.startswith("os.umask(0o077)\n") and "def width()" in kept


def test_a_name_defined_twice_in_the_exported_judge_is_refused() -> None:
    """Two parts defining one helper would each run their own in the package and only the
    last in the exported judge."""
    _defined_once(judge_source())  # the export as it is
    twice = "def clip(x):\n    return x\n\n\nLIMIT = 3\n\n\ndef clip(x):\n    return 0\n"
    with pytest.raises(AssertionError, match="defines clip twice"):
        _defined_once(twice)
    with pytest.raises(AssertionError, match="defines LIMIT twice"):
        _defined_once("LIMIT = 3\nLIMIT: int = 4\n")


def test_the_exported_judge_compares_type_strictly() -> None:
    eq = shared.strict_equal  # inlined into the exported judge (judge_source)
    assert eq(1.0, 1.0 + 1e-12) and not eq(1, 1.0) and not eq(True, 1)
    assert not eq((1, 2), [1, 2]) and eq(judge_script.from_json({"$tuple": [1, 2]}), (1, 2))
    assert not eq(
        judge_script.decode({"$repr": "Always"}), judge_script.decode({"$repr": "Always"})
    )


def test_the_exported_judge_drops_what_swe_drops(tmp_path: Path) -> None:
    original, work = tmp_path / "orig", tmp_path / "work"
    for root in (original, work):
        (root / "pkg").mkdir(parents=True)
        (root / "pkg" / "__init__.py").write_text("")
        (root / "pkg" / "core.py").write_text("X = 1\n")
        (root / "tests").mkdir()
        (root / "tests" / "test_core.py").write_text("assert True\n")
    (work / "pkg" / "core.py").write_text("X = 2\n")
    (work / "conftest.py").write_text("planted\n")
    (work / "json.py").write_text("shadow\n")
    (work / "tests" / "test_core.py").write_text("changed\n")
    spec = {
        "protected": ["tests/*"],
        "test_dirs": ["tests"],
        "runner_files": ["conftest.py"],
        "shadowed": ["json"],
    }
    tree, applied, protected = judge_script.build(spec, work, original)
    assert applied == ["pkg/core.py"] and protected == ["tests/test_core.py"]
    assert tree["pkg/core.py"] == b"X = 2\n" and "conftest.py" not in tree


# ---- the round trip, on the container engine -------------------------------------------


def wrong(env: str, entry: str) -> tuple[list[Action], list[Action]]:
    """A wrong answer as (gymforge actions, Harbor actions)."""
    if env in ("code", "code-agent"):
        code = f"def {entry}(*args, **kwargs):\n    return None\n"
        return [Reply(text=f"```python\n{code}```")], [
            ToolCall(name="write_file", arguments={"path": "solution.py", "content": code}),
            Reply(text="Done."),
        ]
    note = "Looked into it.\n"
    return [
        ToolCall(name="create_file", arguments={"path": "NOTES.md", "content": note}),
        Reply(text="Done."),
    ], [
        ToolCall(name="write_file", arguments={"path": "NOTES.md", "content": note}),
        Reply(text="Done."),
    ]


async def verdict(
    env: Any, task_id: str, actions: list[Action] | None
) -> tuple[bool, dict[str, float]]:
    """Play ``actions`` (None: the oracle's) and return (passed, the reward components of the
    answer: ``harbor.`` and ``step_cost`` dropped)."""
    await env.reset(task_id, 0)
    steps = actions if actions is not None else env.oracle_plan(env.task)
    for a in steps:
        r = await env.step(a)
        if r.terminated or r.truncated:
            parts = {
                k.removeprefix("harbor."): v
                for k, v in r.reward_components.items()
                if k != "step_cost"
            }
            return bool(r.info["verdict"]["passed"]), parts
    raise AssertionError("the episode did not end")


@pytest.mark.containers
@pytest.mark.parametrize("env_id", EXPORTED)
def test_the_round_trip_gives_the_same_verdicts(
    env_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harbor_helpers import READY, WHY

    if not READY:
        pytest.skip(WHY)
    monkeypatch.setenv("GYMFORGE_HARBOR_IMAGE_MAP", IMAGE_MAP)
    export(env_id, tmp_path / env_id)
    harbor = make_env(f"harbor:{tmp_path / env_id}")
    original = make_env(env_id)

    async def go() -> list[tuple[str, str, bool, bool, dict[str, float], dict[str, float]]]:
        rows = []
        for ht in harbor.harbor_tasks.values():  # type: ignore[attr-defined]
            gid = str(ht.metadata["gymforge_task_id"])
            entry = str(original.tasks.resolve(gid).truth.get("entry_point", ""))  # type: ignore[attr-defined]
            g_wrong, h_wrong = wrong(env_id, entry)
            noop: list[Action] = [Reply(text="Done.")]
            plays: list[tuple[str, list[Action] | None, list[Action] | None]] = [
                ("oracle", None, None),
                ("noop", noop, noop),
                ("wrong", g_wrong, h_wrong),
            ]
            for label, g_acts, h_acts in plays:
                g, g_parts = await verdict(original, gid, g_acts)
                h, h_parts = await verdict(harbor, ht.task_id, h_acts)
                rows.append((gid, label, g, h, g_parts, h_parts))
        await harbor.close()
        await original.close()
        return rows

    rows = asyncio.run(go())
    assert len(rows) == 6
    assert all(r[2] == r[3] for r in rows), rows
    assert [r[2] for r in rows if r[1] == "oracle"] == [True, True]
    assert not any(r[2] for r in rows if r[1] != "oracle")
    if env_id != "swe":  # the code kinds' reward.json holds code's components
        assert all(r[5] == pytest.approx(r[4]) for r in rows), rows


def tree(root: Path) -> dict[str, str | bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_the_exported_swe_verifier_run_directly_gives_swes_verdicts(
    tmp_path: Path, exported: Exports
) -> None:
    """No engine (the verifier in one sandbox job): the oracle's fix (solve.sh, its /app
    pointed at a copy of the repository)
    pays 1; no change, a change to a note only, and a change to a protected test pay 0, the
    verdicts ``swe`` gives them (the container round trip compares the two directly)."""
    task = exported("swe")[1][0]
    solve = (task / "solution" / "solve.sh").read_text()
    plays = {
        "oracle": lambda ws: subprocess.run(
            ["bash", "-c", solve.replace("/app", str(ws))], check=True, timeout=60
        ),
        "noop": lambda ws: None,
        "note": lambda ws: (ws / "NOTES.md").write_text("looked into it\n"),
        "protected": lambda ws: [
            p.write_text(p.read_text() + "\n# changed\n")
            for p in sorted(ws.glob("tests/test_*.py"))
        ],
    }
    for label, play in plays.items():
        ws = tmp_path / label / "app"
        shutil.copytree(task / "environment" / "repo", ws)
        play(ws)
        files = judge_in_sandbox(task, tree(ws))
        assert files == {"reward.txt": b"1\n" if label == "oracle" else b"0\n"}, (label, files)


def test_a_task_that_does_not_export_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    rows = [
        {
            "task_id": "stdio-sum",
            "prompt": "Print the sum.",
            "tests": [{"input": "1 2", "output": "3"}],
        }
    ]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    p = subprocess.run(
        [sys.executable, "-m", "gymforge.cli", "tasks", "export", "code", "--dataset", str(data),
         "--out", str(tmp_path / "out")],
        capture_output=True, text=True, env=cli_env(), timeout=300, check=False,
    )  # fmt: skip
    assert p.returncode != 0 and "only function-call code tasks export" in p.stderr, p.stderr
    assert "'stdio'" in p.stderr and not (tmp_path / "out").exists()
