"""`gymforge new NAME` refuses a name that cannot work, in one line naming the fix, exit 2.

Before: ``gymforge new class`` wrote ``test_class.py`` with ``from class import ClassEnv`` (a
SyntaxError), and ``gymforge new ledger`` wrote an environment whose id is the built-in's, so
``gymforge replay`` of its runs played the built-in ledger and diverged.
"""

from __future__ import annotations

import ast
import keyword
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gymforge.cli import app
from gymforge.core.errors import UserError
from gymforge.registry.resolve import BUILTIN
from gymforge.scaffold import class_name, scaffold, scaffold_package

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def new(*args: str | Path) -> tuple[int, str]:
    result = CliRunner(env={"FORCE_COLOR": None, "NO_COLOR": "1"}).invoke(
        app, ["new", *(str(a) for a in args)]
    )
    return result.exit_code, ANSI.sub("", result.stderr)


def refused(tmp_path: Path, name: str, *flags: str) -> str:
    """The one error line of ``gymforge new NAME``; nothing is written."""
    code, stderr = new(name, "--dir", tmp_path, *flags)
    lines = [ln for ln in stderr.strip().splitlines() if ln.startswith("error:")]
    assert code == 2 and len(lines) == 1 and "Traceback" not in stderr, stderr
    assert list(tmp_path.iterdir()) == [], "a refused name wrote files"
    return lines[0]


@pytest.mark.parametrize("name", ["class", "import", "lambda", "async"])
@pytest.mark.parametrize("flags", [(), ("--package",)])
def test_a_keyword_is_refused(tmp_path: Path, name: str, flags: tuple[str, ...]) -> None:
    line = refused(tmp_path, name, *flags)
    assert "Python keyword" in line and "pick another name" in line, line


@pytest.mark.parametrize("name", ["match", "case", "type"])
def test_a_soft_keyword_is_refused(tmp_path: Path, name: str) -> None:
    assert "Python soft keyword" in refused(tmp_path, name)


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_every_builtin_id_is_refused(tmp_path: Path, name: str) -> None:
    """``support-desk`` is not a module name; its underscore spelling is refused as well."""
    line = refused(tmp_path, name.replace("-", "_"))
    assert f"built-in environment {name!r}" in line and "pick another name" in line, line


@pytest.mark.parametrize("name", ["ledger", "sql"])
def test_a_builtin_id_is_refused_for_a_package_too(tmp_path: Path, name: str) -> None:
    assert "built-in environment" in refused(tmp_path, name, "--package")


@pytest.mark.parametrize("name", ["random", "json", "pydantic", "gymforge", "pytest"])
def test_an_importable_module_is_refused(tmp_path: Path, name: str) -> None:
    """``random.py`` beside its test shadows the standard library's ``random``, which the
    written environment itself imports."""
    assert "would shadow it" in refused(tmp_path, name)


def test_a_class_name_the_template_uses_is_refused(tmp_path: Path) -> None:
    """``tool`` makes ``class ToolEnv(ToolEnv[...])``, hiding the base class it extends."""
    assert "ToolEnv" in refused(tmp_path, "tool")


def test_the_scaffolded_files_of_an_accepted_name_parse(tmp_path: Path) -> None:
    """Every Python file either scaffold writes compiles, under the accepted name."""
    written = scaffold("crate_box", tmp_path / "one") + scaffold_package(
        "crate_box", tmp_path / "pkg", "0.1.0"
    )
    for path in written:
        if path.suffix == ".py":
            ast.parse(path.read_text(), filename=str(path))


def test_the_rules_hold_for_the_api_too(tmp_path: Path) -> None:
    for name in [*keyword.kwlist, *keyword.softkwlist, "ledger"]:
        with pytest.raises(UserError):
            scaffold(name, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_force_may_overwrite_the_users_own_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scaffold already in the current directory is importable from there; that is the
    user's file, not a module it would shadow, so ``--force`` still rewrites it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert new("bins")[0] == 0
    code, stderr = new("bins", "--force")
    assert code == 0, stderr
    code, stderr = new("bins", "--package")
    assert code == 0, stderr
    assert (tmp_path / "bins" / "bins" / "env.py").is_file()
    assert class_name("bins") in (tmp_path / "bins.py").read_text()
