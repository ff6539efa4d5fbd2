"""How the exported ``swe`` verifier builds the tree it judges (inlined into ``judge.py`` at
export, so standard library only): ``swe``'s ``build`` rule on plain files. The original
repository with the agent's changes applied, except changes to protected paths, test
directories (and, for task files, the hidden tests' directories and paths), runner files and
modules that shadow the standard library; a change that clashes, as a file against a
directory, with a path the judge keeps is undone (``_drop_conflicts``)."""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import Any


def read_tree(root: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in filenames:
            p = Path(dirpath) / name
            if p.is_file() and not p.is_symlink():
                out[p.relative_to(root).as_posix()] = p.read_bytes()
    return out


def drop_reason(path: str, new: bool, spec: dict[str, Any], packages: set[str]) -> str | None:
    """Why a change to ``path`` never reaches the judged tree (``swe``'s rule)."""
    parts = path.split("/")
    name = parts[-1]
    if any(fnmatch.fnmatchcase(path, g) for g in spec["protected"]):
        return "protected"
    if any(path.startswith(d + "/") for d in spec.get("hidden_dirs", [])):
        return "test"
    if set(spec["test_dirs"]) & set(parts[:-1]):
        return "test"
    if (
        new
        and name.endswith(".py")
        and (fnmatch.fnmatch(name, "test*.py") or name.endswith("_test.py"))
    ):
        return "test"
    if name in spec["runner_files"] or name.endswith(".pth"):
        return "runner"
    shadowed = set(spec["shadowed"])
    for depth in range(len(parts)):
        parent = "/".join(parts[:depth])
        if parent and parent in packages:
            break
        child = parts[depth]
        last = depth == len(parts) - 1
        module = child[:-3] if last and child.endswith(".py") else (None if last else child)
        if module in shadowed:
            return "shadow"
    return None


def build(
    spec: dict[str, Any], workspace: Path, original: Path
) -> tuple[dict[str, bytes], list[str], list[str]]:
    """(the judged tree, changes applied, protected paths changed)."""
    before, after = read_tree(original), read_tree(workspace)
    packages = {
        os.path.dirname(p) for p in (*before, *after) if os.path.basename(p) == "__init__.py"
    }
    tree, applied, protected = dict(before), [], []
    for path in sorted(before.keys() | after.keys()):
        if before.get(path) == after.get(path):
            continue
        why = drop_reason(path, path not in before, spec, packages)
        if path in spec.get("hidden_paths", []):
            why = why or "test"
        if why == "protected":
            protected.append(path)
        if why is not None:
            continue
        if path in after:
            tree[path] = after[path]
        else:
            del tree[path]
        applied.append(path)
    drop_conflicts(tree, applied, before, spec.get("hidden_paths", []))
    return tree, applied, protected


def drop_conflicts(
    tree: dict[str, bytes], applied: list[str], before: dict[str, bytes], hidden: list[str]
) -> None:
    """Undo the applied changes whose path clashes, as a file against a directory, with a
    path the judge keeps (a hidden test file, a file whose change was dropped)."""
    kept = set(hidden) | {p for p in tree if p not in applied}
    kept_dirs = {os.path.dirname(p) for p in kept}
    for d in list(kept_dirs):
        while d:
            kept_dirs.add(d)
            d = os.path.dirname(d)
    for path in list(applied):
        parts = path.split("/")
        if path in kept_dirs or any("/".join(parts[:i]) in kept for i in range(1, len(parts))):
            applied.remove(path)
            if path in before:
                tree[path] = before[path]
            else:
                tree.pop(path, None)
