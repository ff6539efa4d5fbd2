"""The curated top-level API: ``gymforge.X`` is the library's own object, imported on first use."""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import gymforge
from gymforge.core import Reply

HOMES = {
    "Environment": ("gymforge.core.env", "Environment"),
    "TaskFamily": ("gymforge.tasks.family", "TaskFamily"),
    "ToolEnv": ("gymforge.kit.tool_env", "ToolEnv"),
    "Verdict": ("gymforge.core.verdict", "Verdict"),
    "make": ("gymforge.registry.resolve", "make_env"),
    "run": ("gymforge.rollout.runner", "run"),
    "tool": ("gymforge.tools.tool", "tool"),
}
ROOT = Path(__file__).resolve().parents[1]


def test_all_names_the_curated_api_and_the_version() -> None:
    assert sorted(gymforge.__all__) == sorted([*HOMES, "__version__"])
    assert set(HOMES) <= set(dir(gymforge))


@pytest.mark.parametrize("name", sorted(HOMES))
def test_each_name_is_its_home_modules_object(name: str) -> None:
    module, attr = HOMES[name]
    assert getattr(gymforge, name) is getattr(importlib.import_module(module), attr)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Enviroment'"):
        _ = gymforge.Enviroment  # type: ignore[attr-defined]
    assert not hasattr(gymforge, "make_env")


def test_import_gymforge_loads_no_submodule_and_not_typing() -> None:
    """What keeps ``import gymforge`` cheap, counted rather than timed: nothing of the library
    (nor ``typing``) is imported until a name is used; the first use imports its home."""
    code = (
        "import json, sys; import gymforge; "
        "before = sorted(m for m in sys.modules if m.startswith('gymforge') or m == 'typing'); "
        "gymforge.Verdict; "
        "after = sorted(m for m in sys.modules if m.startswith('gymforge')); "
        "print(json.dumps([before, after]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    before, after = json.loads(out.stdout)
    assert before == ["gymforge", "gymforge.version"]  # the version, one constant, and nothing else
    assert "gymforge.core.verdict" in after and "gymforge.kit.tool_env" not in after


def test_make_gives_an_environment_that_plays_an_episode() -> None:
    env = gymforge.make("ledger")
    assert isinstance(env, gymforge.Environment) and isinstance(env, gymforge.ToolEnv)
    task = env.tasks.sample(1, 3, "train")[0]

    async def episode() -> bool:
        await env.reset(task, 0)
        result = await env.step(Reply(text="I cannot do that."))
        await env.close()
        return result.terminated and not result.info["success"]

    assert asyncio.run(episode())


def test_tool_returns_the_function_itself_with_its_schema() -> None:
    def lookup(name: str) -> str:
        """Find a customer.

        Args:
            name: The customer's name.
        """
        return name.upper()

    decorated = gymforge.tool(lookup)
    assert decorated is lookup and decorated("ann") == "ANN"
    named = gymforge.tool(name="find")(lookup)
    assert named is lookup and lookup.__gymforge_tool__.name == "find"  # type: ignore[attr-defined]
