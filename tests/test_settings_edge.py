"""``os.environ`` is read in one module at the edge: ``gymforge/settings.py``.

Every other module of gymforge gets its configuration passed (a ``Settings`` object or plain
arguments, from the CLI down; ``gymforge.settings`` says which variables exist and what they
mean). This scans the source of every module (the AST, so code held in string literals, which
runs in other processes, is not counted) for ``os.environ``, ``os.environb``, ``os.getenv``,
``os.putenv``, ``os.unsetenv`` and ``from os import environ``-style imports.

The exceptions are code that runs *in a child process* and reads what its parent wrote into
that child's environment, on purpose, to cross the process boundary: the sandbox's zygote,
fork template and job children (standard library only: they may not import gymforge), the
in-sandbox scorer jobs, and the QA fresh process. Each is listed with its reason; an entry
that no longer touches the environment fails too, so the list cannot go stale.
"""

from __future__ import annotations

import ast
from pathlib import Path

import gymforge.version

PACKAGE = Path(gymforge.version.__file__).resolve().parent
EDGE = "settings.py"
NAMES = {"environ", "environb", "getenv", "putenv", "unsetenv"}

CHILD_SIDE = {
    "sandbox/zygote.py": "the zygote, inside the sandbox, gives each job its HOME/TMPDIR/PWD",
    "sandbox/child.py": "a job's child process, inside the sandbox, applies the job's env",
    "sandbox/template.py": "the fork template (stdlib only) passes the zygote's env on",
    "sandbox/warmup.py": "the template's warm-up job (stdlib only) runs with its own env",
    "envs/reasoning_gym/inside.py": "the scorer job reads the site dirs its host named",
    "envs/verifiers_adapter/inside.py": "the rubric job reads the module its host named",
    "qa/fresh_child.py": "the QA fresh process takes the shifted clock its parent set",
    "qa/lifeline.py": "the QA fresh process reads its parent's pid, which the parent set",
    "serve/harness/shell_client.py": "gymforge-sh (stdlib only), copied into a workspace "
    "harness, reads its episode's shell URL and token",
}


def environment_uses(path: Path) -> list[int]:
    """Lines of ``path`` that touch the process environment (see the module docstring)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in NAMES
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
        ) or (
            isinstance(node, ast.ImportFrom)
            and node.module == "os"
            and any(alias.name in NAMES for alias in node.names)
        ):
            lines.append(node.lineno)
    return sorted(lines)


def uses() -> dict[str, list[int]]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        lines = environment_uses(path)
        if lines:
            found[rel] = lines
    return found


def test_the_scan_sees_what_it_looks_for(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text(
        "import os\nfrom os import getenv\na = os.environ.get('X')\n"
        "b = 'os.environ in a string is code for another process'\nos.putenv('Y', '1')\n"
    )
    assert environment_uses(sample) == [2, 3, 5]


def test_only_the_edge_module_reads_the_environment() -> None:
    found = uses()
    assert EDGE in found  # the edge itself is seen
    outside = {rel: lines for rel, lines in found.items() if rel != EDGE and rel not in CHILD_SIDE}
    assert outside == {}, "read configuration through gymforge.settings, or pass it"


def test_every_listed_child_still_needs_its_exception() -> None:
    found = uses()
    assert sorted(set(CHILD_SIDE) - set(found)) == []
