"""What every exported Harbor task shares: ``task.toml``, ``test.sh``, the verifier script."""

from __future__ import annotations

import ast
import inspect
import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

from gymforge.core.types import Task
from gymforge.integrations.harbor_export import (
    judge_build,
    judge_calls,
    judge_candidate,
    judge_script,
)
from gymforge.verify.code import shared as code_rules

BASE_IMAGE = "python:3.11-slim"
"""The base image exported tasks name (map it with ``--image-map`` where it cannot be pulled)."""
DIFFICULTY = {1: "easy", 2: "medium", 3: "hard"}
TEST_SH = """#!/bin/bash
# gymforge's exported verifier: judge.py judges /app on plain data and writes the reward
mkdir -p /logs/verifier
python3 -I /tests/judge.py
"""


def toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def task_toml(task: Task, env_id: str, verifier_timeout: float = 120.0) -> str:
    difficulty = DIFFICULTY.get(task.difficulty, "medium" if task.difficulty > 3 else "easy")
    return (
        'version = "1.0"\n\n[metadata]\n'
        f'author_name = "gymforge tasks export"\n'
        f"difficulty = {toml_string(difficulty)}\n"
        f"category = {toml_string(task.family)}\n"
        f"split = {toml_string(task.split)}\n"
        f"gymforge_env = {toml_string(env_id)}\n"
        f"gymforge_task_id = {toml_string(task.task_id)}\n\n"
        f"[verifier]\ntimeout_sec = {verifier_timeout}\n\n"
        "[agent]\ntimeout_sec = 600.0\n\n"
        "[environment]\nbuild_timeout_sec = 600.0\ncpus = 1\nmemory_mb = 1024\n"
    )


PARTS = (judge_build, judge_calls, judge_candidate)
"""The verifier's own parts, which ``judge_source`` inlines whole (standard library only)."""
INLINED = {m.__name__: m for m in (code_rules, *PARTS)}
"""The modules ``judge_source`` inlines from: the code judge's rules (the functions named)
and the verifier's parts (all of each)."""
BLOCK = re.compile(
    r"^# gymforge-export: inline from here\n(.*?)^# gymforge-export: inline to here\n", re.M | re.S
)


def judge_source() -> str:
    """``judge_script``'s source, standalone: the imports between its ``gymforge-export:
    inline`` markers are replaced by the source of what they import (the code judge's own
    rules, such as ``strict_equal``, and the verifier's parts, each whole: ``judge_build``,
    ``judge_calls``, ``judge_candidate``), so the exported verifier compares, builds and
    runs the candidate as gymforge does."""
    source = inspect.getsource(judge_script)
    imports = _imports(ast.parse(source))

    def inline(m: re.Match[str]) -> str:
        parts = []
        for node in ast.parse(m.group(1)).body:
            assert isinstance(node, ast.ImportFrom) and node.module in INLINED, m.group(1)
            module = INLINED[node.module]
            if module in PARTS:
                parts.append(_part(module, imports))
            else:
                parts += [inspect.getsource(getattr(module, a.name)).rstrip() for a in node.names]
        return "\n\n\n".join(parts) + "\n"

    out = BLOCK.sub(inline, source)
    assert "gymforge." not in out.split('"""', 2)[2], "the exported judge imports gymforge"
    _defined_once(out)
    return out


def _defined_once(source: str) -> None:
    """Every top-level function, class and assigned name of the exported judge is defined
    once: two parts, or a part and the script, defining one name would leave the export
    only with the last of them, while each package module keeps its own."""
    seen: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names = [node.target.id]
        else:
            continue
        for name in names:
            assert name not in seen, f"the exported judge defines {name} twice"
            seen.add(name)


def _imports(tree: ast.Module) -> set[tuple[str, str | None, str | None]]:
    """``(module, name, as)`` of each standard library import at the top of a module."""
    out: set[tuple[str, str | None, str | None]] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            out |= {(a.name, None, a.asname) for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module not in ("__future__", *INLINED):
            out |= {(str(node.module), a.name, a.asname) for a in node.names}
    return out


def _part(module: ModuleType, script_imports: set[tuple[str, str | None, str | None]]) -> str:
    """A part's source after its docstring and imports, the rest verbatim. Each of its
    imports is another part (inlined too) or one of the script's own; all come before its
    first statement (a statement among them would be cut out: such a part is refused)."""
    source = inspect.getsource(module)
    tree = ast.parse(source)
    missing = _imports(tree) - script_imports
    assert not missing, f"judge_script lacks imports {module.__name__} uses: {missing}"
    imports = (ast.Import, ast.ImportFrom)
    doc = int(ast.get_docstring(tree, clean=False) is not None)
    heads = doc + next(
        (i for i, n in enumerate(tree.body[doc:]) if not isinstance(n, imports)),
        len(tree.body) - doc,
    )
    late = [n for n in tree.body[heads:] if isinstance(n, imports)]
    assert not late, f"{module.__name__}: a statement before its imports end"
    end = max((n.end_lineno or n.lineno for n in tree.body[:heads]), default=0)
    return "".join(source.splitlines(keepends=True)[end:]).strip("\n")


def judge_limits(truth: dict[str, Any], calls: int) -> dict[str, float]:
    """The time and memory limits the code judge would run ``calls`` calls of ``truth`` under
    (``limits_for``, the same rule), for ``spec.json``."""
    lim = code_rules.limits_for(code_rules.JudgeConfig().limits, truth, calls)
    return {
        "wall_time": lim.wall_time,
        "cpu_time": lim.cpu,
        "call_timeout": lim.call_timeout,
        "memory_bytes": lim.memory_bytes,
    }


def verifier_files(spec: dict[str, Any]) -> dict[str, str | bytes]:
    """``tests/test.sh``, ``tests/judge.py`` and ``tests/spec.json``."""
    return {
        "tests/test.sh": TEST_SH,
        "tests/judge.py": judge_source(),
        "tests/spec.json": json.dumps(spec, indent=1, sort_keys=True) + "\n",
    }


def heredoc_file(path: str, text: str) -> str:
    """A shell line writing ``text`` to ``path`` exactly (a quoted here-document)."""
    mark = "GYMFORGE_EOF"
    while mark in text:
        mark += "_"
    body = text if text.endswith("\n") else text + "\n"
    trim = "" if text.endswith("\n") else f"\ntruncate -s -1 {path}"
    return f"mkdir -p \"$(dirname {path})\"\ncat > {path} <<'{mark}'\n{body}{mark}{trim}\n"


HIDDEN = ("tests", "solution")
"""The parts of a task the agent must never read: written owner-only (``0700`` directories,
``0600`` files; ``.sh`` files ``0700``), so the verifier's candidate user cannot read them
either (the engine keeps the mode bits when it mounts or copies them)."""


def write_tree(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, data in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            p.write_bytes(data)
        else:
            p.write_text(data, encoding="utf-8")
        hidden = rel.split("/", 1)[0] in HIDDEN
        script = 0o700 if hidden else 0o755
        p.chmod(script if rel.endswith(".sh") else 0o600 if hidden else 0o644)
    for part in HIDDEN:
        for d in [root / part, *(p for p in (root / part).rglob("*") if p.is_dir())]:
            if d.is_dir():
                d.chmod(0o700)
