"""gymforge: seeded, verifiable, QA-checked environments for RL with LLMs.

The names most programs need, importable from the package itself:

- ``Environment``: the async contract every environment implements (``gymforge.core``);
- ``ToolEnv`` and ``tool``: the base class and decorator an environment author writes with;
- ``Verdict``: what a verifier returns (facts, never reward);
- ``TaskFamily``: a seeded, parameterised task distribution;
- ``make(env_id)``: a fresh environment by built-in id, import path or ``ws://`` URL;
- ``run``: the rollout runner (``gymforge.rollout.runner.run``).

Each is imported on first use, so ``import gymforge`` itself stays cheap.
"""

from __future__ import annotations

import importlib

from gymforge.version import __version__

TYPE_CHECKING = False  # ``typing`` itself is not imported: it would double this import's cost
if TYPE_CHECKING:
    from typing import Any

    from gymforge.core.env import Environment
    from gymforge.core.verdict import Verdict
    from gymforge.kit.tool_env import ToolEnv
    from gymforge.registry.resolve import make_env as make
    from gymforge.rollout.runner import run
    from gymforge.tasks.family import TaskFamily
    from gymforge.tools.tool import tool

_EXPORTS: dict[str, tuple[str, str]] = {
    "Environment": ("gymforge.core.env", "Environment"),
    "TaskFamily": ("gymforge.tasks.family", "TaskFamily"),
    "ToolEnv": ("gymforge.kit.tool_env", "ToolEnv"),
    "Verdict": ("gymforge.core.verdict", "Verdict"),
    "make": ("gymforge.registry.resolve", "make_env"),
    "run": ("gymforge.rollout.runner", "run"),
    "tool": ("gymforge.tools.tool", "tool"),
}

__all__ = ["Environment", "TaskFamily", "ToolEnv", "Verdict", "__version__", "make", "run", "tool"]


def __getattr__(name: str) -> Any:
    """Import an exported name on first access (PEP 562) and keep it."""
    try:
        module, attr = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'gymforge' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
