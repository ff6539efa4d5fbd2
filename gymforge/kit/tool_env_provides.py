"""The capabilities ``ToolEnv`` provides (``gymforge.core.capabilities``), checked by mypy:
a ``ToolEnv`` must type-check as each protocol the module docstring of
``gymforge.kit.tool_env`` lists, so a change that breaks one fails ``mypy gymforge``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gymforge.core.capabilities import (
        HasBudget,
        HasJudgedTruth,
        HasTask,
        HasTasks,
        HasToolset,
        SupportsOracle,
        SupportsOraclePlan,
        TakesDatasets,
    )
    from gymforge.kit.tool_env import ToolEnv
    from gymforge.qa_profile import HasQAProfile
    from gymforge.tasks.dataset import Dataset


if TYPE_CHECKING:  # never runs: mypy checks that the return type holds

    def _provides(
        env: ToolEnv[Any, Any],
    ) -> tuple[
        HasTasks,
        HasTask,
        HasJudgedTruth,
        SupportsOracle,
        SupportsOraclePlan,
        HasQAProfile,
        HasToolset,
        HasBudget,
        TakesDatasets[Dataset],
    ]:
        return (env, env, env, env, env, env, env, env, env)
