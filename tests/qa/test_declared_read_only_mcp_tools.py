"""MCP tools without ``readOnlyHint`` can be declared read-only by the environment (issue 36).

Many MCP servers (``mcp-server-time`` among them) annotate no tool, so ``McpToolset`` made
every tool a write, and ``truncation_accounting`` failed with "nothing to test" (no read to
stall with) on an environment the author could not fix without editing the server. The
environment now declares its read-only tools (``McpToolset(conn, read_only=[...])``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp import StdioServerParameters

from gymforge.core.errors import UserError
from gymforge.qa import QATarget, run_qa
from gymforge.qa.checks.common import QAOptions
from gymforge.tools.mcp_connection import McpConnection
from gymforge.tools.mcp_toolset import McpToolset

HERE = Path(__file__).resolve().parent
ENV = str(HERE / "unhinted_tool_env.py")


def test_truncation_accounting_runs_on_declared_read_only_tools() -> None:
    report = run_qa(
        QATarget.load(f"{ENV}:UnhintedToolEnv"),
        QAOptions(episodes=4),
        only=["truncation_accounting"],
    )
    (check,) = report.checks
    assert check.passed and check.applicable, check.details
    assert check.metrics["stalled_episodes"] >= 4


def test_declared_and_hinted_read_only_tools() -> None:
    params = StdioServerParameters(command=sys.executable, args=[str(HERE / "unhinted_server.py")])
    conn = McpConnection(params, call_timeout=20)
    try:
        assert McpToolset(conn).tools["square"].writes  # no hint: may write
        assert not McpToolset(conn, read_only=["square"]).tools["square"].writes
        with pytest.raises(UserError, match="no tools \\['cube'\\]"):
            McpToolset(conn, read_only=["cube"])
    finally:
        conn.close()
