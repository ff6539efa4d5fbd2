"""What the docs, the examples and the ``gymforge new`` templates import from gymforge.

- every gymforge module they import is a supported one (``docs/api.md``'s table);
- what an environment author is shown imports from ``gymforge.authoring`` alone;
- every imported name exists there (a newcomer's first QA run once failed only because
  ``ToolError`` was not importable from ``gymforge.tools``, where the examples led).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = sorted((ROOT / "gymforge" / "scaffold").glob("template_*.py.txt"))
DOCS = sorted([*ROOT.glob("docs/**/*.md"), ROOT / "README.md"])
EXAMPLES = sorted(ROOT.glob("examples/**/*.py"))
AUTHOR_FACING = [
    ROOT / "docs" / "authoring.md",
    ROOT / "docs" / "mcp.md",
    *(p for p in TEMPLATES if p.name != "template_init.py.txt"),  # that one imports NAME.env
    *ROOT.glob("examples/authoring/*.py"),
    *ROOT.glob("examples/mcp_elements/*_env.py"),
]
_BLOCK = re.compile(r"```python\n(.*?)```", re.S)
_IMPORT_START = re.compile(r"^\s*(from\s+gymforge\b|import\s+gymforge\b)")


def public_modules() -> tuple[frozenset[str], frozenset[str]]:
    """(exact module names, prefixes whose one-level children are public) from the first
    column of ``docs/api.md``'s table; ``gymforge.envs.NAME`` is such a prefix."""
    exact: set[str] = set()
    prefixes: set[str] = set()
    for line in (ROOT / "docs" / "api.md").read_text().splitlines():
        if not line.startswith("| `gymforge"):
            continue
        for name in re.findall(r"`(gymforge[\w.]*)`", line.split("|")[1]):
            if name.endswith(".NAME"):
                prefixes.add(name.removesuffix(".NAME"))
            else:
                exact.add(name)
    return frozenset(exact), frozenset(prefixes)


def is_public(module: str) -> bool:
    exact, prefixes = public_modules()
    parent, _, child = module.rpartition(".")
    return module in exact or (parent in prefixes and "." not in child)


def python_of(path: Path) -> str:
    """The Python in a file: a module or template as it is; a Markdown file's ``python``
    blocks, only their gymforge imports (the rest may be a fragment that does not parse)."""
    text = path.read_text()
    if path.suffix != ".md":
        return text.replace("__NAME__", "name").replace("__CLS__", "NameEnv")
    statements: list[str] = []
    for block in _BLOCK.findall(text):
        lines = block.splitlines()
        for i, line in enumerate(lines):
            if not _IMPORT_START.match(line):
                continue
            stmt = line.strip()
            j = i
            while stmt.count("(") > stmt.count(")"):
                j += 1
                stmt += "\n" + lines[j]
            statements.append(stmt)
    return "\n".join(statements)


def gymforge_imports(path: Path) -> Iterator[tuple[str, list[str]]]:
    """(module, imported names) for every gymforge import in ``path``."""
    for node in ast.walk(ast.parse(python_of(path), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] == "gymforge":
                yield node.module, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "gymforge":
                    yield alias.name, []


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_the_public_list_names_real_modules() -> None:
    exact, prefixes = public_modules()
    assert "gymforge.authoring" in exact and "gymforge.envs" in prefixes
    for module in sorted(exact | prefixes):
        importlib.util.find_spec(module) or pytest.fail(f"docs/api.md names {module}")


@pytest.mark.parametrize("path", [*DOCS, *EXAMPLES, *TEMPLATES], ids=rel)
def test_docs_examples_and_templates_import_only_public_modules(path: Path) -> None:
    private = sorted({m for m, _ in gymforge_imports(path) if not is_public(m)})
    assert not private, f"{rel(path)} imports internal modules {private}; see docs/api.md"


@pytest.mark.parametrize("path", AUTHOR_FACING, ids=rel)
def test_what_an_author_is_shown_imports_from_gymforge_authoring(path: Path) -> None:
    found = list(gymforge_imports(path))
    assert found, f"{rel(path)} imports nothing from gymforge: the list above is stale"
    others = sorted({m for m, _ in found if m != "gymforge.authoring"})
    assert not others, f"{rel(path)} imports from {others}, not gymforge.authoring"


@pytest.mark.parametrize("path", [*DOCS, *EXAMPLES, *TEMPLATES], ids=rel)
def test_every_imported_name_exists(path: Path) -> None:
    for module, names in gymforge_imports(path):
        try:
            loaded = importlib.import_module(module)
        except ImportError as err:  # an optional extra that this install lacks
            if (err.name or "").split(".")[0] == "gymforge":
                raise
            continue
        missing = [n for n in names if not hasattr(loaded, n)]
        assert not missing, f"{rel(path)}: `from {module} import {', '.join(missing)}` fails"


def test_tool_error_is_importable_beside_tool() -> None:
    from gymforge.core.errors import ToolError
    from gymforge.tools import ToolError as from_tools
    from gymforge.tools import tool

    assert from_tools is ToolError and callable(tool)
