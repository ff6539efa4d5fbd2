"""The environment seam is type-checked: mypy accepts ``ToolEnv``, ``WorldToolEnv`` and
every built-in environment class as a ``core.Environment``, as a factory
``Callable[[], Environment]``, and as each capability protocol it provides at runtime.

The test writes one module of such assignments and runs strict mypy on it. Before the
protocol's ``spec`` became a read-only property, every assignment failed with "Protocol
member Environment.spec expected instance variable, got class variable", which is why the
code used ``Callable[[], Any]`` factories and casts. A planted class without ``spec`` must
still be refused, so the check can fail.
"""

from __future__ import annotations

import gc
import re
from pathlib import Path

import pytest
from mypy import api

from gymforge.core.capabilities import CAPABILITIES
from gymforge.qa_profile import QA
from gymforge.registry.resolve import BUILTIN, resolve_factory

ROOT = Path(__file__).resolve().parents[2]

BASES = {
    # the bases authors subclass and the adapters' bases (their classes are built per name)
    "gymforge.kit.tool_env:ToolEnv[Any, Any]": (
        "tasks task judged_truth oracle oracle_plan qa toolset budget datasets"
    ),
    "gymforge.world.env:WorldToolEnv[Any]": (
        "tasks task judged_truth oracle oracle_plan qa toolset budget datasets writes"
    ),
    "gymforge.envs.reasoning_gym.env:ReasoningGymEnv": (
        "tasks task judged_truth oracle oracle_plan qa toolset budget datasets"
    ),
    "gymforge.envs.verifiers_adapter.env:VerifiersEnv": (
        "tasks task judged_truth oracle oracle_plan qa toolset budget datasets preflight"
    ),
    "gymforge.envs.openenv_adapter.env:OpenEnvEnv": (
        "tasks task judged_truth oracle oracle_plan qa toolset budget datasets"
    ),
}
ALL_CAPABILITIES = (*CAPABILITIES, QA)  # the QA profile's capability lives with its types
PROTOCOLS = {cap.name: cap.protocol.__name__ for cap in ALL_CAPABILITIES}
PLANTED = "class NoSpec:\n" + "".join(
    f"    async def {m}(self, *a: Any) -> Any: ...\n"
    for m in ("reset", "step", "snapshot", "close")
)


def builtin_classes() -> dict[str, list[str]]:
    """``module:Class`` of every built-in id, with the capabilities an instance has."""
    out: dict[str, list[str]] = {}
    for env_id in sorted(BUILTIN):
        factory = resolve_factory(env_id)
        assert isinstance(factory, type), f"{env_id}: the built-in factory is its class"
        env = factory()
        out[f"{factory.__module__}:{factory.__qualname__}"] = [
            cap.name for cap in ALL_CAPABILITIES if cap.present(env)
        ]
    return out


def seam_module() -> str:
    lines = [
        "from collections.abc import Callable",
        "from typing import Any, TypeVar",
        "from gymforge.core.env import Environment",
        "from gymforge.core.capabilities import *",
        "from gymforge.qa_profile import HasQAProfile",
        "D = TypeVar('D')",
        "def datasets(env: TakesDatasets[D]) -> None: ...",
        PLANTED,
        "planted: Environment = NoSpec()  # must be refused",
    ]
    classes = {ref: (caps.split(), False) for ref, caps in BASES.items()}
    classes.update({ref: (caps, True) for ref, caps in builtin_classes().items()})
    for i, (ref, (caps, concrete)) in enumerate(classes.items()):
        module, name = ref.split(":")
        name, bracket, args = name.partition("[")
        lines.append(f"from {module} import {name} as C{i}")
        lines.append(f"def check{i}(env: C{i}{bracket}{args}) -> None:")
        lines.append("    seam: Environment = env")
        if concrete:
            lines.append(f"    factory: Callable[[], Environment] = C{i}")
        for cap in caps:
            if cap == "datasets":
                lines.append("    datasets(env)")
            else:
                lines.append(f"    {cap}: {PROTOCOLS[cap]} = env")
    return "\n".join(lines) + "\n"


# one xdist worker runs both mypy tests: the second reuses the first's analysis of gymforge
# (the ``mypy_cache`` fixture), instead of each worker analysing it cold
@pytest.mark.xdist_group("mypy")
def test_every_environment_class_satisfies_the_typed_seam(tmp_path: Path, mypy_cache: Path) -> None:
    snippet = tmp_path / "seam_check.py"
    snippet.write_text(seam_module())
    assert snippet.read_text().count("seam: Environment = env") == len(BASES) + len(BUILTIN)
    thresholds = gc.get_threshold()  # mypy's build sets its own, for the whole process
    try:
        out, err, _ = api.run(
            [
                "--strict",
                "--follow-imports=silent",
                "--cache-dir",
                str(mypy_cache),
                "--config-file",
                str(ROOT / "pyproject.toml"),
                str(snippet),
            ]
        )
    finally:
        gc.set_threshold(*thresholds)
    errors = [line for line in out.splitlines() if ": error:" in line]
    planted = [e for e in errors if re.search(r'"NoSpec".*"Environment"', e)]
    assert planted, f"the planted class without spec was not refused:\n{out}{err}"
    rest = [e for e in errors if e not in planted and "NoSpec" not in e]
    assert not rest, "\n".join(rest)
