"""Building blocks for environment authors: ``ToolEnv`` implements the whole contract."""

from gymforge.kit.tool_env import ToolEnv

__all__ = ["ToolEnv"]
