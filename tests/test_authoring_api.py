"""``gymforge.authoring``: one module that re-exports every name an environment author uses,
each loaded on first use."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import gymforge.authoring as authoring

ROOT = Path(__file__).resolve().parents[1]


def test_the_table_the_type_checking_imports_and_all_agree() -> None:
    """mypy reads the ``TYPE_CHECKING`` imports, Python the table: they name the same homes."""
    tree = ast.parse(Path(authoring.__file__).read_text())
    guarded = next(n for n in tree.body if isinstance(n, ast.If))
    typed = {
        alias.name: node.module
        for node in guarded.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert typed == authoring._EXPORTS
    assert sorted(authoring.__all__) == sorted(authoring._EXPORTS)


def test_each_name_is_its_home_object() -> None:
    for name, home in authoring._EXPORTS.items():
        assert getattr(authoring, name) is getattr(importlib.import_module(home), name), name


def test_the_names_the_issue_lists_are_there() -> None:
    wanted = {"ToolEnv", "WorldToolEnv", "tool", "ToolError", "Reply", "ToolCall", "Task"}
    wanted |= {"TaskFamily", "TaskSource", "ParamSpace", "IntKnob", "ChoiceKnob", "Split"}
    wanted |= {"QAProfile", "Verdict", "Budget", "EnvSpec", "EnvironmentQA"}
    assert wanted <= set(authoring.__all__)


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        authoring.ToolEnvironment  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as err:
        assert "ToolEnvironment" in str(err)
    else:
        raise AssertionError("an unknown name resolved")


def test_a_name_costs_only_its_own_module() -> None:
    """An environment that imports ``ToolEnv`` does not load the QA suite (``EnvironmentQA``
    pulls in the checks) nor the world layer, in every process that runs it."""
    code = (
        "import sys\n"
        "from gymforge.authoring import ToolEnv, tool, ToolError, QAProfile\n"
        "heavy = [m for m in ('gymforge.qa.suite', 'gymforge.qa.testing', 'gymforge.world.env',"
        " 'hypothesis') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout
