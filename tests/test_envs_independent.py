"""No built-in environment package imports another (issue 33: "nothing keeps the ``envs.*``
packages independent of each other"); the import-linter contract in ``pyproject.toml`` says
the same for ``make lint``. This test reads every import statement, in functions and under
``TYPE_CHECKING`` too, so it also holds imports that only run later.

Before: the reasoning-gym adapter imported the ``puzzles`` environment's checkers; they now
live below both, in ``gymforge.verify.puzzles``."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENVS = ROOT / "gymforge" / "envs"
SHARED = {"third_party_scoring", "interop_rows"}  # modules beside the packages, for any of them


def imported(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return found


def test_no_environment_package_imports_another() -> None:
    packages = sorted(p.name for p in ENVS.iterdir() if (p / "__init__.py").is_file())
    assert {"puzzles", "reasoning_gym", "ledger"} <= set(packages)
    crossing = []
    for package in packages:
        for path in sorted((ENVS / package).rglob("*.py")):
            for module in imported(path):
                parts = module.split(".")
                other = parts[2] if parts[:2] == ["gymforge", "envs"] and len(parts) > 2 else None
                if other is not None and other not in (package, *SHARED):
                    crossing.append(f"{path.relative_to(ROOT)} -> {module}")
    assert not crossing, crossing


def test_the_shared_modules_import_no_environment_package() -> None:
    for name in sorted(SHARED):
        modules = imported(ENVS / f"{name}.py")
        assert not [m for m in modules if m.startswith("gymforge.envs.")], name


def test_import_linter_holds_the_same() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contracts = config["tool"]["importlinter"]["contracts"]
    found = [c for c in contracts if c["type"] == "independence"]
    assert [c["modules"] for c in found] == [["gymforge.envs.*"]]
    assert sorted(found[0]["ignore_imports"]) == [
        f"gymforge.envs.** -> gymforge.envs.{name}" for name in sorted(SHARED)
    ]
