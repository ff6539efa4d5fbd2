"""Render a ``Project`` into repository files, and run its functions here (in the judge) for
expected values.

A repository is a list of ``Unit`` (one function: its module, name, source and the functions
it calls). ``render`` writes the package (one file per module, imports derived from
``uses``), filler modules, the visible test suite, ``tests/conftest.py``, ``pyproject.toml``, a
CI workflow and a README. ``load`` executes the units in this process (our own generated
code, never the agent's) and returns the callables by ``module.name``.
"""

from __future__ import annotations

import dataclasses
import functools
import random
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import CodeType
from typing import Any

from gymforge.envs.swe.projects import Fn, Project, filler_fn

PROTECTED = (
    "tests/**",
    "conftest.py",
    "**/conftest.py",
    "pyproject.toml",
    "setup.cfg",
    "pytest.ini",
    "tox.ini",
    ".github/**",
)
"""What the agent may not change in a generated repository (tests, test configuration,
conftest, CI files)."""


@dataclass(frozen=True)
class Unit:
    module: str
    name: str
    source: str
    uses: tuple[str, ...] = ()
    filler: bool = False

    @property
    def key(self) -> str:
        return f"{self.module}.{self.name}"


def units_of(project: Project) -> list[Unit]:
    return [Unit(f.module, f.name, f.source, f.uses) for f in project.fns]


def add_fillers(units: list[Unit], n: int, r: random.Random) -> dict[str, Callable[..., Any]]:
    """Append ``n`` filler modules (``util_1`` ...) of two helpers each; their generators."""
    gens: dict[str, Callable[..., Any]] = {}
    for i in range(1, n + 1):
        for j in range(2):
            name, src, gen = filler_fn(r, i * 10 + j)
            units.append(Unit(f"util_{i}", name, src, filler=True))
            gens[f"util_{i}.{name}"] = gen
    return gens


def rename(units: list[Unit], key: str, new_name: str, new_module: str | None) -> list[Unit]:
    """``key`` renamed (and moved), every caller updated."""
    old = next(u for u in units if u.key == key)
    word = re.compile(rf"\b{re.escape(old.name)}\b")
    moved = dataclasses.replace(
        old, name=new_name, module=new_module or old.module, source=word.sub(new_name, old.source)
    )
    new_key = moved.key
    out = []
    for u in units:
        if u.key == key:
            out.append(moved)
        elif key in u.uses:
            uses = tuple(new_key if k == key else k for k in u.uses)
            out.append(dataclasses.replace(u, source=word.sub(new_name, u.source), uses=uses))
        else:
            out.append(u)
    return out


def _module_text(project: Project, module: str, units: list[Unit]) -> str:
    doc = project.modules.get(module) or f"Helpers ({module})."
    mine = [u for u in units if u.module == module]
    where = {u.key: u for u in units}
    imports: dict[str, set[str]] = {}
    for u in mine:
        for k in u.uses:
            dep = where[k]
            if dep.module != module:
                imports.setdefault(dep.module, set()).add(dep.name)
    lines = [f'"""{doc}"""\n']
    if imports:
        lines.append("")
        for mod in sorted(imports):
            lines.append(f"from {project.package}.{mod} import {', '.join(sorted(imports[mod]))}")
    body = "\n\n".join(u.source for u in mine)
    return "\n".join(lines) + "\n\n\n" + body


def modules(units: Iterable[Unit]) -> list[str]:
    return list(dict.fromkeys(u.module for u in units))


def render(
    project: Project, units: list[Unit], tests: dict[str, list[tuple[list[Any], Any]]]
) -> dict[str, str]:
    """The repository's files. ``tests``: ``module.name`` -> visible (args, expected)."""
    pkg = project.package
    files: dict[str, str] = {}
    mods = modules(units)
    for m in mods:
        files[f"{pkg}/{m}.py"] = _module_text(project, m, units)
    files[f"{pkg}/__init__.py"] = f'"""{pkg}: {project.summary}."""\n\n__version__ = "0.3.1"\n'
    where = {u.key: u for u in units}
    for m in mods:
        cases = [(k, c) for k, cs in tests.items() if where[k].module == m for c in cs]
        if not cases:
            continue
        names = sorted({where[k].name for k, _ in cases})
        out = [f'"""Tests for {pkg}.{m}."""\n', f"from {pkg}.{m} import {', '.join(names)}\n"]
        for i, (k, (args, expected)) in enumerate(cases, 1):
            name = where[k].name
            call = f"{name}({', '.join(repr(a) for a in args)})"
            out.append(f"\ndef test_{name}_{i}():\n    assert {call} == {expected!r}\n")
        files[f"tests/test_{m}.py"] = "\n".join(out)
    files["tests/conftest.py"] = (
        '"""Test configuration: make the package importable from the repository root."""\n\n'
        "import os\nimport sys\n\n"
        "sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))\n"
    )
    files["pyproject.toml"] = (
        f'[project]\nname = "{pkg}"\nversion = "0.3.1"\nrequires-python = ">=3.10"\n\n'
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
    )
    files[".github/workflows/ci.yml"] = (
        "name: ci\non: [push, pull_request]\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
        "    steps:\n      - uses: actions/checkout@v4\n      - run: python -m pytest -q\n"
    )
    listing = "\n".join(f"- `{pkg}/{m}.py`: {project.modules.get(m, 'helpers.')}" for m in mods)
    files["README.md"] = (
        f"# {pkg}\n\n{project.summary.capitalize()}.\n\n## Layout\n\n{listing}\n\n"
        "## Development\n\nRun the tests with `python -m pytest -q` (or the `run_tests` "
        "tool). Pure Python, no dependencies.\n"
    )
    return dict(sorted(files.items()))


@functools.lru_cache(maxsize=4096)
def _compiled(source: str, key: str) -> CodeType:
    """A unit's code object: immutable, so every ``load`` of the same unit executes the same
    one (each into fresh functions) instead of compiling it again."""
    return compile(source, f"<{key}>", "exec")


_UNIT_FILE = re.compile(r"<\w+(?:\.\w+)+>")
"""The file names units are compiled under (``<module.name>``): what the line budget counts.
No other code has such a name (``<string>``, ``<frozen module>`` and real paths do not)."""


def load(units: list[Unit]) -> dict[str, Callable[..., Any]]:
    """Execute the units here (our own code) and return their functions by key."""
    spaces: dict[str, dict[str, Any]] = {}
    for u in units:
        ns = spaces.setdefault(u.module, {"__name__": u.module})
        exec(_compiled(u.source, u.key), ns)
    where = {u.key: u for u in units}
    for u in units:
        for k in u.uses:
            dep = where[k]
            spaces[u.module][dep.name] = spaces[dep.module][dep.name]
    return {u.key: spaces[u.module][u.name] for u in units}


_FAILED = object()


MAX_LINES = 200_000
"""Lines one call of mutated code may execute here; a mutant can loop forever (``n += 1``
made ``n += 0``)."""
UNBOUNDED = ("raises", "Unbounded", f"more than {MAX_LINES} lines executed")


class _Unbounded(BaseException):
    """Raised by the line budget; a BaseException, so the code's own ``except`` misses it."""


def outcome(fn: Callable[..., Any], args: list[Any], max_lines: int | None = None) -> Any:
    """``fn(*args)``, or a ``("raises", type name, message)`` marker when it raises. With
    ``max_lines`` (for mutated code, which runs in this process and can loop forever), a call
    that executes more lines than that is stopped and gives ``UNBOUNDED``.

    Only the lines of the units (and of ``fn``'s own file, for code executed another way)
    count, and the budget is only ever spent in them: CPython switches off a trace function
    that raises, and in other code running meanwhile (a finaliser freed by the mutant, whose
    exceptions are printed and ignored) the budget's exception would be swallowed and the
    mutant left to run untraced, forever (``tests/envs/swe/test_line_budget.py``)."""
    if max_lines is None:
        return _call(fn, args)
    left = max_lines

    def local(frame: Any, event: str, arg: Any) -> Any:
        nonlocal left
        if event == "line":
            left -= 1
            if left < 0:
                raise _Unbounded
        return local

    fn_file = getattr(getattr(fn, "__code__", None), "co_filename", "")

    def on_call(frame: Any, event: str, arg: Any) -> Any:
        name = frame.f_code.co_filename
        return local if name == fn_file or _UNIT_FILE.fullmatch(name) else None

    previous = sys.gettrace()
    sys.settrace(on_call)
    try:
        return _call(fn, args)
    except _Unbounded:
        return UNBOUNDED
    finally:
        sys.settrace(previous)


def _call(fn: Callable[..., Any], args: list[Any]) -> Any:
    try:
        return fn(*[_copy(a) for a in args])
    except Exception as err:  # the generated code's own behaviour, recorded as data
        return ("raises", type(err).__name__, str(err)[:80])


def _copy(v: Any) -> Any:
    if isinstance(v, list):
        return [_copy(x) for x in v]
    return v


def fn_for(project: Project, key: str) -> Fn | None:
    return next((f for f in project.fns if f.key == key), None)


def callers(units: list[Unit], key: str) -> dict[str, int]:
    """Every unit that reaches ``key`` through calls, with its distance (1 = direct), in
    (distance, key) order: never a set's order, which follows the process's string hash."""
    dist: dict[str, int] = {}
    frontier = {key}
    d = 0
    while frontier:
        d += 1
        nxt = sorted(
            u.key for u in units if set(u.uses) & frontier and u.key not in dist and u.key != key
        )
        for k in nxt:
            dist[k] = d
        frontier = set(nxt)
    return dist
