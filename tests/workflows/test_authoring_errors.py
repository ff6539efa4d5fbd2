"""Mistakes in an environment file: one or two lines naming the file, the line and the fix."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from wf_helpers import cli

from gymforge.scaffold import scaffold


@pytest.fixture
def env_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory with a scaffolded ``shop.py`` as the working directory (paths print
    relative to it)."""
    scaffold("shop", tmp_path)
    here = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(here)


def broken(env_dir: Path, name: str, old: str, new: str) -> str:
    source = (env_dir / "shop.py").read_text()
    assert old in source
    (env_dir / f"{name}.py").write_text(source.replace(old, new, 1))
    return f"{name}.py"


def line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def short_error(args: list[str]) -> list[str]:
    res = cli(*args)
    assert res.code == 2, res.stderr
    assert "Traceback" not in res.stderr
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert 1 <= len(lines) <= 2, lines
    assert lines[0].startswith("error: "), lines
    return lines


def test_a_tool_parameter_without_a_type_hint(env_dir: Path) -> None:
    f = broken(env_dir, "nohint", "def get_stock(self, sku: str)", "def get_stock(self, sku)")
    lines = short_error(["qa", f"{f}:ShopEnv"])
    n = line_of(env_dir / f, "def get_stock")
    assert lines[0].startswith(f"error: {f}:{n}: tool get_stock: parameter 'sku' needs a type")
    assert "`sku: str`" in lines[0]


def test_a_syntax_error(env_dir: Path) -> None:
    f = broken(env_dir, "syntax", "p.name.lower()]", "p.name.lower()")
    lines = short_error(["run", f"{f}:ShopEnv", "--out", env_dir / "o"])
    assert re.match(rf"error: {f}:\d+: syntax error: '\[' was never closed", lines[0]), lines
    assert "return [p for p in" in lines[1]


def test_an_exception_while_importing_names_the_authors_line(env_dir: Path) -> None:
    f = broken(env_dir, "nameerr", "WORDS = [", "WORDS = undefined_thing + [")
    lines = short_error(["run", f"{f}:ShopEnv", "--out", env_dir / "o"])
    n = line_of(env_dir / f, "undefined_thing")
    assert lines[0].startswith(f"error: {f}:{n}: NameError while loading {f}"), lines


def test_a_path_without_its_class_names_the_class(env_dir: Path) -> None:
    lines = short_error(["qa", "shop.py"])
    assert lines == ["error: shop.py names a file, not the environment in it: use shop.py:ShopEnv"]
    lines = short_error(["qa", "shop.py:Shop"])
    assert lines == ["error: shop.py has no callable 'Shop': use shop.py:ShopEnv"]


def test_a_wrong_hook_signature(env_dir: Path) -> None:
    f = broken(
        env_dir,
        "hook",
        "def init_world(self, task: Task, r: random.Random)",
        "def init_world(self, task: Task)",
    )
    lines = short_error(["run", f"{f}:ShopEnv", "--out", env_dir / "o"])
    n = line_of(env_dir / f, "def init_world")
    assert lines[0].startswith(f"error: {f}:{n}: ShopEnv.init_world(self, task: Task)"), lines
    assert "(ToolEnv.init_world)" in lines[0]
    assert lines[1].strip().startswith("def init_world(self, task: Task, r: random.Random)")


def test_an_undescribed_tool_argument_is_a_one_line_warning(env_dir: Path) -> None:
    f = broken(env_dir, "nodoc", "            sku: The product SKU, such as SKU123456.\n", "")
    res = cli("run", f"{f}:ShopEnv", "-n", "1", "--out", env_dir / "o")
    assert res.code == 0, res.stderr
    n = line_of(env_dir / f, "def get_stock")
    warning = [line for line in res.stderr.splitlines() if line.startswith("warning:")]
    assert warning == [
        f"warning: {f}:{n}: tool get_stock: argument 'sku' is not described in its docstring, "
        "so the schema tells the model nothing about it; add `sku: what it means` under `Args:`"
    ]
