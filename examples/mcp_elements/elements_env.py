"""``mcp_elements``: an environment whose tools are an MCP server's (``elements_server.py``).

The agent is asked for the molar mass of a formula such as ``Na2CO3``; it looks the
elements up with the server's ``element``/``find_elements`` tools and replies with the
number, rounded to two decimals. The tools are not written here: ``McpToolset`` lists them
from the server (schemas and all), validates the agent's arguments against the server's
schemas, injects the episode's seeded faults and records every call in the trajectory.

The server is a process of its own (spawned over stdio on first use, shared by the
environments of this process, respawned if it dies). A server that dies mid-episode makes
the step raise ``InfraError``: the runner retries the episode and never scores it.

    gymforge qa examples/mcp_elements/elements_env.py:ElementsEnv
"""

from __future__ import annotations

import atexit
import json
import random
import re
import sys
import threading
from pathlib import Path
from typing import Any

from mcp import StdioServerParameters
from pydantic import BaseModel

from gymforge.core import Budget, EnvSpec, Reply, Task, ToolCall
from gymforge.kit import ToolEnv
from gymforge.qa import QAProfile, ThroughputBudget
from gymforge.tasks import IntKnob, ParamSpace, Split, TaskFamily, TaskSource
from gymforge.tools import FaultPlan
from gymforge.tools.mcp_connection import McpConnection
from gymforge.tools.mcp_toolset import McpToolset
from gymforge.verify import Verdict

HERE = Path(__file__).resolve().parent
MASSES: dict[str, float] = {
    e["symbol"]: e["atomic_mass"]
    for e in json.loads((HERE / "elements.json").read_text(encoding="utf-8"))
}
NUMBER = re.compile(r"\s*(-?\d+(?:\.\d+)?)\s*(?:g/mol)?\s*")

_lock = threading.Lock()
_shared: McpConnection | None = None


def server_connection() -> McpConnection:
    """The process's connection to the elements server (started on first use)."""
    global _shared
    with _lock:
        if _shared is None:
            params = StdioServerParameters(
                command=sys.executable, args=[str(HERE / "elements_server.py")]
            )
            _shared = McpConnection(params, call_timeout=20.0)
            atexit.register(_shared.close)
        return _shared


class Formula(BaseModel):
    """The hidden truth: the formula's element counts and its molar mass."""

    counts: dict[str, int]
    answer: float


class MolarMassFamily(TaskFamily[Formula]):
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, Formula]:
        symbols = r.sample(sorted(MASSES), params["elements"])
        counts = {s: r.randint(1, params["max_count"]) for s in symbols}
        formula = "".join(s + (str(n) if n > 1 else "") for s, n in counts.items())
        answer = round(sum(MASSES[s] * n for s, n in counts.items()), 2)
        prompt = (
            f"What is the molar mass of {formula} in g/mol, from the element table's atomic "
            "masses? Reply with the number alone, rounded to two decimals."
        )
        return prompt, Formula(counts=counts, answer=answer)


FAMILY = MolarMassFamily(
    "mcp_elements.molar_mass",
    1,
    {
        1: ParamSpace({"elements": IntKnob(2, 3), "max_count": IntKnob(2, 4)}),
        2: ParamSpace({"elements": IntKnob(3, 4), "max_count": IntKnob(3, 8)}),
    },
)


class World(BaseModel):
    """Nothing changes in an episode: the server's tools only read."""

    formula: dict[str, int]


class ElementsEnv(ToolEnv[Formula, World]):
    spec = EnvSpec(
        "mcp_elements", "0.1.0", description="Molar masses from an MCP periodic-table server."
    )
    tasks = TaskSource.of(
        [FAMILY],
        Split(regions={"mcp_elements.molar_mass": {"four_elements": lambda p: p["elements"] == 4}}),
    )
    budget = Budget(max_steps=10)
    qa = QAProfile(
        verifier_kinds=("match",),
        throughput=ThroughputBudget(reset_p50_ms=20.0, steps_per_s=40.0, concurrency=4),
    )
    system_prompt = (
        "You are a chemist. Look the elements up with the tools (retry a call that fails "
        "with a retryable error), then reply with the molar mass alone."
    )

    def __init__(self) -> None:
        super().__init__()
        self.toolset = McpToolset(server_connection())

    def init_world(self, task: Task, r: random.Random) -> World:
        return World(formula=self.truth_of(task).counts)

    def fault_plan(self, task: Task) -> FaultPlan:
        return FaultPlan(rates={"timeout": 0.1, "empty": 0.05})

    def verify(self, task: Task, world: World, reply: str) -> Verdict:
        expected = self.truth_of(task).answer
        m = NUMBER.fullmatch(reply)
        got = float(m.group(1)) if m is not None else None
        passed = got is not None and abs(got - expected) <= 0.011
        reason = None if passed else ("unparsable" if got is None else "wrong_answer")
        return Verdict(
            passed=passed,
            reason=reason,
            verifier="mcp_elements.molar_mass@1",
            facts={"expected": expected, "got": got},
        )

    def oracle_plan(self, task: Task) -> list[Any]:
        truth = self.truth_of(task)
        calls: list[Any] = [ToolCall(name="element", arguments={"symbol": s}) for s in truth.counts]
        return [*calls, Reply(text=f"{truth.answer:.2f}")]
