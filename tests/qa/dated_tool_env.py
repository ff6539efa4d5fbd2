"""Environments whose tool is an MCP stdio server answering with today's date.

``DatedToolEnv`` starts the server as any MCP client does (the SDK's stdio client gives it
a scrubbed environment); ``ClockProofToolEnv`` starts it through ``env -u LD_PRELOAD``, a
launcher no preloaded clock survives. Every episode's observation holds the date the tool
returned, so a replay on another day diverges.
"""

from __future__ import annotations

import atexit
import random
import sys
import threading
from pathlib import Path
from typing import Any, ClassVar

from mcp import StdioServerParameters
from pydantic import BaseModel

from gymforge.core import Budget, EnvSpec, Reply, Task, ToolCall
from gymforge.kit import ToolEnv
from gymforge.qa import QAProfile
from gymforge.tasks import IntKnob, ParamSpace, TaskFamily, TaskSource
from gymforge.tools.mcp_connection import McpConnection
from gymforge.tools.mcp_toolset import McpToolset
from gymforge.verify import Verdict

SERVER = Path(__file__).with_name("date_server.py")
_lock = threading.Lock()
_shared: dict[tuple[str, ...], McpConnection] = {}


def connection(command: tuple[str, ...]) -> McpConnection:
    with _lock:
        if command not in _shared:
            params = StdioServerParameters(command=command[0], args=list(command[1:]))
            _shared[command] = McpConnection(params, call_timeout=20.0)
            atexit.register(_shared[command].close)
        return _shared[command]


class Truth(BaseModel):
    n: int


class AskFamily(TaskFamily[Truth]):
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, Truth]:
        return f"Call today, then reply {params['n']}.", Truth(n=params["n"])


FAMILY = AskFamily("dated.ask", 1, {1: ParamSpace({"n": IntKnob(1, 50)})})


class World(BaseModel):
    pass


class DatedToolEnv(ToolEnv[Truth, World]):
    spec = EnvSpec("dated_tool", "0.1.0", description="A tool that returns today's date.")
    tasks = TaskSource.of([FAMILY])
    budget = Budget(max_steps=4)
    qa = QAProfile(verifier_kinds=("match",))
    command: ClassVar[tuple[str, ...]] = (sys.executable, str(SERVER))

    def __init__(self) -> None:
        super().__init__()
        self.toolset = McpToolset(connection(self.command))

    def init_world(self, task: Task, r: random.Random) -> World:
        return World()

    def verify(self, task: Task, world: World, reply: str) -> Verdict:
        passed = reply.strip() == str(self.truth_of(task).n)
        return Verdict(passed=passed, reason=None if passed else "wrong_answer", verifier="n@1")

    def oracle_plan(self, task: Task) -> list[Any]:
        return [ToolCall(name="today", arguments={}), Reply(text=str(self.truth_of(task).n))]


class ClockProofToolEnv(DatedToolEnv):
    command = ("env", "-u", "LD_PRELOAD", sys.executable, str(SERVER))
