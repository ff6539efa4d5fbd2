"""The module import graph of gymforge has no hidden circles and no arrow back to the root.

import-linter (``make lint``) holds the layers, but it does not see every import: an import
inside a function or under ``if TYPE_CHECKING:`` is still an arrow, and a circle hidden behind
one is still a circle (it only moves the failure from import time to call time). This test
builds the graph from source, not from what happens to be imported:

- every ``gymforge`` module (``gymforge/**/*.py``; a package is its ``__init__``) is a node;
- every ``import``/``from ... import`` statement anywhere in a module's AST (top level, in a
  function, under ``TYPE_CHECKING``, in a ``try``) is an arrow; relative imports are resolved
  against the module's package; ``from pkg import name`` points at ``pkg.name`` when that is a
  module, else at ``pkg``; an import of a name that is not a module points at the nearest
  enclosing module that exists;
- the implicit import of a parent package when a submodule is imported is not an arrow (it is
  the same for every module and says nothing about the design).

It asserts: no circle (strongly connected component of more than one module) inside
``gymforge.sandbox`` nor inside ``gymforge.integrations``; no circle between top-level
packages (each module counted as its first-level package, ``gymforge.x``); and no module
below the root imports the root facade ``gymforge`` itself (``__version__`` is
``gymforge.version``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import gymforge.version

ROOT = "gymforge"
PACKAGE_DIR = Path(gymforge.version.__file__).resolve().parent


def modules(package_dir: Path = PACKAGE_DIR) -> dict[str, tuple[Path, bool]]:
    """``{dotted name: (file, is_package)}`` of every module of the package."""
    found: dict[str, tuple[Path, bool]] = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        found[".".join(parts)] = (path, is_package)
    return found


def _nearest(name: str, known: Mapping[str, object]) -> str | None:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str, path: Path, is_package: bool, known: Mapping[str, object]) -> set[str]:
    """The gymforge modules ``module`` imports anywhere in its source."""
    package = module if is_package else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*base_parts, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            if target.split(".")[0] == ROOT:
                resolved = _nearest(target, known)
                if resolved is not None and resolved != module:
                    out.add(resolved)
    return out


def import_graph(package_dir: Path = PACKAGE_DIR) -> dict[str, set[str]]:
    known = modules(package_dir)
    return {m: imports_of(m, path, is_pkg, known) for m, (path, is_pkg) in known.items()}


def cycles(nodes: Iterable[str], graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, iterative), restricted
    to ``nodes``; each sorted, the list sorted."""
    keep = set(nodes)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(keep):
        if start in index:
            continue
        work = [(start, iter(sorted(t for t in graph.get(start, ()) if t in keep)))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(t for t in graph.get(child, ()) if t in keep))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def package_graph(graph: Mapping[str, Iterable[str]]) -> dict[str, set[str]]:
    """The graph between first-level packages (``gymforge.x``); the root itself is left out."""

    def top(name: str) -> str | None:
        parts = name.split(".")
        return ".".join(parts[:2]) if len(parts) > 1 else None

    out: dict[str, set[str]] = {}
    for source, targets in graph.items():
        a = top(source)
        if a is None:
            continue
        out.setdefault(a, set())
        for target in targets:
            b = top(target)
            if b is not None and b != a:
                out[a].add(b)
    return out


GRAPH = import_graph()


def _inside(package: str) -> list[str]:
    return [m for m in GRAPH if m == package or m.startswith(package + ".")]


def test_the_graph_sees_in_function_and_type_checking_imports() -> None:
    # the measurement itself: arrows the runtime never takes at import time are counted
    assert "gymforge.core.env" in GRAPH["gymforge"]  # under ``if TYPE_CHECKING:``
    assert "gymforge.sandbox.session" in GRAPH["gymforge.sandbox.local"]  # in a function
    assert "gymforge.sandbox.backend" in GRAPH["gymforge.sandbox.local"]  # top level
    assert cycles(["a", "b", "c"], {"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c"]]
    assert cycles(["a", "b"], {"a": {"b"}, "b": set()}) == []


def test_no_circle_inside_sandbox() -> None:
    assert cycles(_inside("gymforge.sandbox"), GRAPH) == []


def test_no_circle_inside_integrations() -> None:
    assert cycles(_inside("gymforge.integrations"), GRAPH) == []


def test_no_circle_between_top_level_packages() -> None:
    packages = package_graph(GRAPH)
    assert cycles(packages, packages) == []


def test_no_module_below_the_root_imports_the_root_facade() -> None:
    assert sorted(m for m, targets in GRAPH.items() if m != ROOT and ROOT in targets) == []
