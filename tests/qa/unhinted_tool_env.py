"""An environment on an MCP server whose tools carry no ``readOnlyHint`` (many third-party
servers ship none), declared read-only by the environment instead (``McpToolset``'s
``read_only``)."""

from __future__ import annotations

import atexit
import random
import sys
import threading
from pathlib import Path
from typing import Any

from mcp import StdioServerParameters
from pydantic import BaseModel

from gymforge.core import Budget, EnvSpec, Reply, Task, ToolCall
from gymforge.kit import ToolEnv
from gymforge.qa import QAProfile
from gymforge.tasks import IntKnob, ParamSpace, TaskFamily, TaskSource
from gymforge.tools.mcp_connection import McpConnection
from gymforge.tools.mcp_toolset import McpToolset
from gymforge.verify import Verdict

SERVER = Path(__file__).with_name("unhinted_server.py")
_lock = threading.Lock()
_shared: list[McpConnection] = []


def connection() -> McpConnection:
    with _lock:
        if not _shared:
            params = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
            _shared.append(McpConnection(params, call_timeout=20.0))
            atexit.register(_shared[0].close)
        return _shared[0]


class Square(BaseModel):
    n: int


class SquareFamily(TaskFamily[Square]):
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, Square]:
        return f"What is {params['n']} squared? Reply with the number.", Square(n=params["n"])


FAMILY = SquareFamily("squares.square", 1, {1: ParamSpace({"n": IntKnob(2, 99)})})


class World(BaseModel):
    pass


class UnhintedToolEnv(ToolEnv[Square, World]):
    spec = EnvSpec("unhinted_tool", "0.1.0", description="Squares from an MCP server.")
    tasks = TaskSource.of([FAMILY])
    budget = Budget(max_steps=4)
    qa = QAProfile(verifier_kinds=("match",))

    def __init__(self) -> None:
        super().__init__()
        self.toolset = McpToolset(connection(), read_only=["square"])

    def init_world(self, task: Task, r: random.Random) -> World:
        return World()

    def verify(self, task: Task, world: World, reply: str) -> Verdict:
        passed = reply.strip() == str(self.truth_of(task).n ** 2)
        return Verdict(passed=passed, reason=None if passed else "wrong_answer", verifier="sq@1")

    def oracle_plan(self, task: Task) -> list[Any]:
        n = self.truth_of(task).n
        return [ToolCall(name="square", arguments={"n": n}), Reply(text=str(n * n))]
