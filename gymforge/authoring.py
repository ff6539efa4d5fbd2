"""Everything an environment author writes with, from one module.

``docs/authoring.md``, the ``gymforge new`` templates and the examples import only from here::

    from gymforge.authoring import EnvSpec, Reply, Task, ToolCall, ToolEnv, ToolError, tool

This module re-exports; each name keeps its home (the table ``_EXPORTS`` says where), so
``gymforge.authoring.ToolEnv is gymforge.kit.ToolEnv``. A name is imported on first use
(PEP 562), so an environment that uses ``ToolEnv`` does not pay for the world layer or the QA
suite (``EnvironmentQA`` pulls in the checks): importing an environment stays as cheap as
importing its own dependencies, in every process that runs it.

The module sits above ``qa`` in the layers (``docs/architecture.md``): it names the pytest
mixin and the QA declarations, and nothing inside gymforge imports it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gymforge.core.env import EnvSpec
    from gymforge.core.episode import Budget, MalformedPolicy
    from gymforge.core.errors import ToolError
    from gymforge.core.seeding import rng
    from gymforge.core.types import JSON, Action, Reply, Task, ToolCall
    from gymforge.core.verdict import Verdict
    from gymforge.kit.tool_env import ToolEnv
    from gymforge.qa.testing import EnvironmentQA
    from gymforge.qa_profile import Baselines, QAProfile, RedTeamCase, ThroughputBudget
    from gymforge.reward.compose import ComposedReward
    from gymforge.reward.standard import StandardReward
    from gymforge.tasks.family import ChoiceKnob, IntKnob, ParamSpace, TaskFamily
    from gymforge.tasks.source import TRAINING_PATHS, TaskSource
    from gymforge.tasks.split import HeldOutError, Split
    from gymforge.tasks.truth import AnswerTruth, validate_bulk
    from gymforge.tools.faults import FaultPlan
    from gymforge.tools.mcp_connection import McpConnection
    from gymforge.tools.mcp_toolset import McpToolset
    from gymforge.tools.result import ToolResult
    from gymforge.tools.tool import tool
    from gymforge.world.env import WorldToolEnv, WorldTruth
    from gymforge.world.schema import Schema, table
    from gymforge.world.search import search
    from gymforge.world.writes import world_read, world_write

_EXPORTS: dict[str, str] = {
    # the contract's values
    "Action": "gymforge.core.types",
    "JSON": "gymforge.core.types",
    "Reply": "gymforge.core.types",
    "Task": "gymforge.core.types",
    "ToolCall": "gymforge.core.types",
    "EnvSpec": "gymforge.core.env",
    "Budget": "gymforge.core.episode",
    "MalformedPolicy": "gymforge.core.episode",
    "Verdict": "gymforge.core.verdict",
    "ToolError": "gymforge.core.errors",
    "rng": "gymforge.core.seeding",
    # tasks
    "TaskFamily": "gymforge.tasks.family",
    "ParamSpace": "gymforge.tasks.family",
    "IntKnob": "gymforge.tasks.family",
    "ChoiceKnob": "gymforge.tasks.family",
    "TaskSource": "gymforge.tasks.source",
    "TRAINING_PATHS": "gymforge.tasks.source",
    "Split": "gymforge.tasks.split",
    "HeldOutError": "gymforge.tasks.split",
    "AnswerTruth": "gymforge.tasks.truth",
    "validate_bulk": "gymforge.tasks.truth",
    # tools
    "tool": "gymforge.tools.tool",
    "FaultPlan": "gymforge.tools.faults",
    "ToolResult": "gymforge.tools.result",
    "McpConnection": "gymforge.tools.mcp_connection",  # an environment on an MCP tool server
    "McpToolset": "gymforge.tools.mcp_toolset",
    # the environment classes, reward and world state
    "ToolEnv": "gymforge.kit.tool_env",
    "StandardReward": "gymforge.reward.standard",
    "ComposedReward": "gymforge.reward.compose",
    "WorldToolEnv": "gymforge.world.env",
    "WorldTruth": "gymforge.world.env",
    "Schema": "gymforge.world.schema",
    "table": "gymforge.world.schema",
    "search": "gymforge.world.search",
    "world_read": "gymforge.world.writes",
    "world_write": "gymforge.world.writes",
    # what QA reads, and QA from pytest
    "QAProfile": "gymforge.qa_profile",
    "Baselines": "gymforge.qa_profile",
    "RedTeamCase": "gymforge.qa_profile",
    "ThroughputBudget": "gymforge.qa_profile",
    "EnvironmentQA": "gymforge.qa.testing",
}
"""Exported name -> the module that defines it (``tests/test_authoring_api.py`` holds this
table and the ``TYPE_CHECKING`` imports above to the same names)."""

__all__ = [
    "JSON",
    "TRAINING_PATHS",
    "Action",
    "AnswerTruth",
    "Baselines",
    "Budget",
    "ChoiceKnob",
    "ComposedReward",
    "EnvSpec",
    "EnvironmentQA",
    "FaultPlan",
    "HeldOutError",
    "IntKnob",
    "MalformedPolicy",
    "McpConnection",
    "McpToolset",
    "ParamSpace",
    "QAProfile",
    "RedTeamCase",
    "Reply",
    "Schema",
    "Split",
    "StandardReward",
    "Task",
    "TaskFamily",
    "TaskSource",
    "ThroughputBudget",
    "ToolCall",
    "ToolEnv",
    "ToolError",
    "ToolResult",
    "Verdict",
    "WorldToolEnv",
    "WorldTruth",
    "rng",
    "search",
    "table",
    "tool",
    "validate_bulk",
    "world_read",
    "world_write",
]


def __getattr__(name: str) -> Any:
    """Import an exported name on first access and keep it."""
    home = _EXPORTS.get(name)
    if home is None:
        raise AttributeError(f"module 'gymforge.authoring' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
