"""The tree a ``swe`` hidden run judges: BUILT from the original repository, never inherited
from the agent's workspace.

``built_tree`` starts from a fresh copy of the task's original files and applies the agent's
changes (files created, changed or deleted: the workspace diffed against the original) one
path at a time, only to source files. A change is dropped, and listed with its reason, when
the path is:

- ``protected``: matches the task's protected globs (a protected change also fails the
  episode: ``judging``);
- ``test``: under the hidden tests' directories or a ``tests``/``test``/``testing``
  directory, or a new file named like a test module (``test*.py``, ``*_test.py``): the
  judge's tests and whatever a runner would discover next to them;
- ``runner``: a file a test runner or the interpreter loads by itself (``conftest.py``,
  ``sitecustomize.py``, ``usercustomize.py``, ``*.pth``, runner configuration such as
  ``pytest.ini``, ``tox.ini``, ``setup.cfg``, ``pyproject.toml``);
- ``shadow``: a module that could be imported instead of a standard-library or test-runner
  module (``unittest/``, ``argparse.py``, ``pytest.py``...): its name is one of those and it
  sits where a runner may put a directory on ``sys.path`` (the repository root or any
  directory that is not a package).

- ``conflict``: a file where the tree the judge keeps needs a directory, or under a path the
  judge keeps as a file (a file named like the hidden tests' directory; files under a
  protected file the agent turned into a directory, whose deletion is dropped): the built
  tree, with the hidden tests laid over it, is always a tree the sandbox can lay out, so
  agent data never makes the hidden run fail to start.

So the hidden tests, the runner and everything on its import path ahead of the repository
come from the judge; only the agent's source changes reach the run.
"""

from __future__ import annotations

import fnmatch
import posixpath
import sys
from dataclasses import dataclass, field

from gymforge.envs.swe.workspace import is_protected

TEST_DIRS = frozenset({"tests", "test", "testing"})
RUNNER_FILES = frozenset(
    {
        "conftest.py",
        "sitecustomize.py",
        "usercustomize.py",
        "pytest.ini",
        ".pytest.ini",
        "pytest.toml",
        ".pytest.toml",
        "tox.ini",
        "setup.cfg",
        "pyproject.toml",
        "noxfile.py",
    }
)
RUNNER_MODULES = frozenset(
    {"pytest", "_pytest", "py", "pluggy", "iniconfig", "nose", "nose2", "hypothesis", "coverage"}
)
SHADOWED = frozenset(sys.stdlib_module_names) | RUNNER_MODULES | {"conftest", "__main__"}


@dataclass
class Built:
    """The hidden run's starting files (before the judge's hidden tests are laid over them),
    the agent's changes that reached them and the ones dropped (path -> reason)."""

    files: dict[str, str]
    applied: list[str] = field(default_factory=list)
    dropped: dict[str, str] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        """Whether any of the agent's changes reached the hidden run."""
        return bool(self.applied)


def built_tree(
    original: dict[str, str],
    agent: dict[str, str],
    protected: list[str],
    hidden: dict[str, str] | None = None,
) -> Built:
    hidden_dirs = {posixpath.dirname(p) for p in hidden or {}} - {""}
    packages = {posixpath.dirname(p) for p in (*original, *agent) if _is_init(p)}
    out = Built(files=dict(original))
    for path in sorted(original.keys() | agent.keys()):
        before, after = original.get(path), agent.get(path)
        if before == after:
            continue
        why = drop_reason(path, before is None, protected, hidden_dirs, packages)
        if hidden and path in hidden:
            why = why or "test"
        if why is not None:
            out.dropped[path] = why
        elif after is None:
            del out.files[path]
            out.applied.append(path)
        else:
            out.files[path] = after
            out.applied.append(path)
    _drop_conflicts(out, original, hidden or {})
    return out


def _drop_conflicts(out: Built, original: dict[str, str], hidden: dict[str, str]) -> None:
    """Undo the applied changes whose path clashes, as a file against a directory, with a
    path the judge keeps (a hidden test file, a file whose change was dropped)."""
    kept = set(hidden) | {p for p in out.files if p not in out.applied}
    kept_dirs = {posixpath.dirname(p) for p in kept}
    for d in list(kept_dirs):
        while d:
            kept_dirs.add(d)
            d = posixpath.dirname(d)
    for path in list(out.applied):
        parts = path.split("/")
        if path in kept_dirs or any("/".join(parts[:i]) in kept for i in range(1, len(parts))):
            out.applied.remove(path)
            out.dropped[path] = "conflict"
            if path in original:
                out.files[path] = original[path]
            else:
                out.files.pop(path, None)


def drop_reason(
    path: str, new: bool, protected: list[str], hidden_dirs: set[str], packages: set[str]
) -> str | None:
    """Why a change to ``path`` never reaches a hidden run (None: it does)."""
    parts = path.split("/")
    name = parts[-1]
    if is_protected(path, protected):
        return "protected"
    if any(path.startswith(d + "/") for d in hidden_dirs) or TEST_DIRS & set(parts[:-1]):
        return "test"
    if (
        new
        and name.endswith(".py")
        and (fnmatch.fnmatch(name, "test*.py") or name.endswith("_test.py"))
    ):
        return "test"
    if name in RUNNER_FILES or name.endswith(".pth"):
        return "runner"
    for depth in range(len(parts)):
        parent = "/".join(parts[:depth])
        if parent and parent in packages:
            break  # below a package: imported by its dotted name, never found first
        child = parts[depth]
        last = depth == len(parts) - 1
        module = child[:-3] if last and child.endswith(".py") else (None if last else child)
        if module in SHADOWED:
            return "shadow"
    return None


def _is_init(path: str) -> bool:
    return posixpath.basename(path) == "__init__.py"
