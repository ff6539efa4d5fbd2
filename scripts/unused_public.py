#!/usr/bin/env python3
"""List gymforge's public top-level functions and classes that no production code uses.

  unused_public.py [ROOT]     one ``path:line:name  tests=N`` line per finding (N: how
                              often the tests name it); exit 0 either way

"Used" means named in code (a ``Name`` or an ``Attribute``, not a string or a docstring),
imported by a module that is not a package ``__init__`` (a re-export is not a use), or named
by a ``module:attr`` string (entry points), anywhere in gymforge/, examples/, benchmarks/
or scripts/. Decorated functions (CLI commands) are skipped. A finding is a question, not a
verdict: public API meant for users (a token counter, test helpers in ``gymforge.testing``)
is legitimately unused inside the repository.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

PRODUCT = ("gymforge", "examples", "benchmarks", "scripts")


def names_used(files: list[Path], *, reexports_count: bool) -> Counter[str]:
    used: Counter[str] = Counter()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Name):
                used[node.id] += 1
            elif isinstance(node, ast.Attribute):
                used[node.attr] += 1
            elif isinstance(node, ast.ImportFrom):
                if reexports_count or path.name != "__init__.py":
                    used.update(a.name for a in node.names)
            elif (
                isinstance(node, ast.Constant) and isinstance(node.value, str) and ":" in node.value
            ):
                used[node.value.rsplit(":", 1)[-1]] += 1
    return used


def main(root: Path) -> None:
    product = [p for d in PRODUCT for p in sorted((root / d).rglob("*.py"))]
    used = names_used(product, reexports_count=False)
    in_tests = names_used(sorted((root / "tests").rglob("*.py")), reexports_count=True)
    for path in sorted((root / "gymforge").rglob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            decorated = bool(node.decorator_list) and not isinstance(node, ast.ClassDef)
            if node.name.startswith("_") or decorated or used[node.name]:
                continue
            print(
                f"{path.relative_to(root)}:{node.lineno}:{node.name}  tests={in_tests[node.name]}"
            )


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "."))
