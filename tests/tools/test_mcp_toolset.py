"""``McpToolset`` against real MCP servers started by the tests (the SDK's ``MCPServer`` over
stdio, and gymforge's own ``--mcp`` server over HTTP): schemas from the server, arguments
validated before the call, structured errors, injected faults, calls in trajectories, and a
server killed mid-episode (an infrastructure error: retried, never scored)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from budget import QUICK_QA, without_speed_budget
from mcp import StdioServerParameters

from gymforge.core.errors import InfraError
from gymforge.core.policy import PolicyTurn
from gymforge.core.types import Observation, ToolCall
from gymforge.qa import QATarget, run_qa
from gymforge.registry.resolve import make_env
from gymforge.rollout import LocalExecutor, OraclePolicy, RunSpec, run
from gymforge.serve.config import ServeConfig
from gymforge.serve.mcp.launch import McpServerThread
from gymforge.tools import FaultPlan, Toolset
from gymforge.tools.mcp_connection import McpConnection
from gymforge.tools.mcp_toolset import McpToolset
from gymforge.trajectory.io import read_episodes

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
EXAMPLE = ROOT / "examples" / "mcp_elements" / "elements_env.py"
TOKEN = "toolset-token-0123456789"


@pytest.fixture
def connection() -> Iterator[McpConnection]:
    params = StdioServerParameters(command=sys.executable, args=[str(HERE / "mcp_test_server.py")])
    conn = McpConnection(params, call_timeout=20)
    try:
        yield conn
    finally:
        conn.close()


def call(toolset: Toolset, tool: str, /, **arguments: Any) -> dict[str, Any]:
    result, _ = asyncio.run(toolset.acall(ToolCall(name=tool, arguments=arguments)))
    return result.model_dump()


def received(toolset: Toolset) -> list[str]:
    calls: list[str] = call(toolset, "received")["content"]["calls"]
    return calls


def test_schemas_and_write_flags_come_from_the_server(connection: McpConnection) -> None:
    toolset = McpToolset(connection)
    served = {t.name: t for t in connection.list_tools()}
    assert list(toolset.tools) == list(served)
    for schema in toolset.schemas:
        fn = schema["function"]
        assert fn["parameters"] == served[fn["name"]].input_schema
        assert fn["description"] == served[fn["name"]].description
    assert not toolset.tools["echo"].writes and toolset.tools["write_note"].writes


def test_arguments_are_validated_against_the_schema_before_the_call(
    connection: McpConnection,
) -> None:
    toolset = McpToolset(connection)
    bad = [
        {"text": 3},  # wrong type
        {},  # a required argument missing
        {"text": "a", "loud": True},  # an argument the schema does not declare
        {"text": "a", "times": "2"},  # no coercion: the schema says integer
    ]
    for arguments in bad:
        result = call(toolset, "echo", **arguments)
        assert not result["ok"] and result["error"]["kind"] == "invalid_arguments", arguments
    assert received(toolset) == []  # none of them reached the server
    assert call(toolset, "echo", text="ab", times=2)["content"] == {"text": "abab"}
    assert call(toolset, "echo", text="ab", times=None)["content"] == {"text": "ab"}
    assert received(toolset) == ["echo", "echo"]


def test_server_errors_come_back_as_structured_tool_errors(connection: McpConnection) -> None:
    toolset = McpToolset(connection)
    refused = call(toolset, "refuse", reason="quota exceeded")
    assert not refused["ok"] and refused["error"]["kind"] == "validation"
    assert "quota exceeded" in refused["error"]["message"]
    missing = call(toolset, "missing", key="k1")
    assert missing["error"] == {"kind": "not_found", "message": "no note k1", "retryable": False}
    unknown = call(toolset, "drop_tables")
    assert unknown["error"]["kind"] == "unknown_tool"  # refused here; never sent
    assert received(toolset) == ["refuse", "missing"]


def test_fault_plans_are_injected_without_reaching_the_server(connection: McpConnection) -> None:
    toolset = McpToolset(connection)
    plan = FaultPlan(
        forced=(("write_note", 0, "timeout"), ("echo", 1, "stale"), ("echo", 2, "empty"))
    )
    toolset.reset("task", 0, plan)
    timeout = call(toolset, "write_note", key="a", body="x")
    assert timeout["error"]["kind"] == "timeout" and timeout["fault"] == "timeout"
    assert call(toolset, "echo", text="v1")["content"] == {"text": "v1"}
    stale = call(toolset, "echo", text="v1")
    assert stale["stale"] and stale["as_of_call"] == 0 and stale["content"] == {"text": "v1"}
    assert call(toolset, "echo", text="v2")["content"] == {}  # the schema's empty object
    assert received(toolset) == ["echo"]  # only the one real call got through


def _kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)


def test_a_dead_server_is_an_infra_error_and_the_next_call_reconnects(
    connection: McpConnection,
) -> None:
    toolset = McpToolset(connection)
    pid = call(toolset, "received")["content"]["pid"]
    _kill(pid)
    with pytest.raises(InfraError, match="MCP server"):
        asyncio.run(toolset.acall(ToolCall(name="echo", arguments={"text": "a"})))
    again = call(toolset, "received")["content"]
    assert again["pid"] != pid and again["calls"] == [] and connection.connects == 2


def test_a_toolset_over_streamable_http_with_a_bearer_token(tmp_path: Path) -> None:
    """gymforge's own ``--mcp`` server is an MCP tool server like any other."""
    with McpServerThread("ledger", ServeConfig(token=TOKEN)) as server:
        auth = {"Authorization": f"Bearer {TOKEN}"}
        url = httpx.post(f"{server.http_url}/sessions", headers=auth).json()["url"]
        conn = McpConnection(url, headers=auth, call_timeout=20)
        try:
            toolset = McpToolset(conn, only=["gymforge_reset", "search_customers"])
            assert list(toolset.tools) == ["gymforge_reset", "search_customers"]
            reset = call(toolset, "gymforge_reset", task_id="ledger.transfer/v1/d1/s5")
            assert reset["ok"] and reset["content"]["step"] == 0
            found = call(toolset, "search_customers", name="a")
            assert found["ok"] and found["content"]["tool_result"]["ok"]
            assert call(toolset, "search_customers", name=1)["error"]["kind"] == (
                "invalid_arguments"
            )
        finally:
            conn.close()


class KillingOracle(OraclePolicy):
    """The oracle, except that on its first episode it kills the tool server after the first
    tool call: the next call finds the server dead."""

    kills: list[int] = []

    async def act(self, observation: Observation) -> PolicyTurn:
        env: Any = self._env
        if not KillingOracle.kills and env.counters.steps == 1:
            pid = _server_pids()[0]
            _kill(pid)
            KillingOracle.kills.append(pid)
        return await super().act(observation)


def _server_pids() -> list[int]:
    """This process's children running the elements server."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if int(stat[1]) == os.getpid() and b"elements_server.py" in cmdline:
            pids.append(int(entry))
    return pids


def test_a_server_killed_mid_episode_is_retried_by_the_runner_and_never_scored(
    tmp_path: Path,
) -> None:
    env_ref = f"{EXAMPLE}:ElementsEnv"
    env_cls = type(make_env(env_ref))
    tasks = env_cls.tasks.sample(2, 7)
    spec = RunSpec(env=env_ref, policy="oracle", tasks=tasks, out=tmp_path, concurrency=1)
    result = asyncio.run(run(spec, LocalExecutor(env_cls, KillingOracle)))
    s = result.summary
    assert KillingOracle.kills, "the server was never killed"
    assert s["episodes"] == 2 and s["infra_retries"] == 1 and s["infra_errors"] == 0
    assert s["success_rate"] == 1.0  # the broken attempt was not scored
    logs = read_episodes(tmp_path / "trajectories.jsonl")
    assert len(logs) == 2 and all(log.end is not None and log.end.success for log in logs)
    calls = [s for log in logs for s in log.steps if s.tool_result is not None]
    assert calls and all(s.tool_result["tool"] == "element" for s in calls)  # type: ignore[index]
    assert any(s.tool_result["ok"] for s in calls)  # type: ignore[index]


def test_the_example_environment_on_an_mcp_server_passes_qa() -> None:
    # judged as the built-ins' reports are in the default run: a third of qa's episodes and
    # fuzzed inputs, and no wall-clock budget (a throughput over it is kept as passed, with
    # its figures); every check still runs
    report = without_speed_budget(run_qa(QATarget.load(f"{EXAMPLE}:ElementsEnv"), QUICK_QA))
    failed = {c.name: c.details for c in report.checks if not c.passed}
    assert not failed and len(report.checks) == 10
