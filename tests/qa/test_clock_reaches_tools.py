"""QA's shifted clock reaches the tool subprocesses an environment starts (issue 36).

An environment built on an MCP date server (as on ``mcp-server-time``) passed
``replay_determinism`` although its tool results hold today's date: the fresh process's
clock was shifted, but the tool server (started by the MCP SDK's stdio client with a
scrubbed environment) ran on the real clock, so runs "replayed" only on the day they were
recorded. Now the shifted clock reaches the server and the replay diverges; a tool started
so that no preloaded clock can reach it is named in the report instead.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gymforge.qa import QATarget, clock, run_qa
from gymforge.qa.checks.common import QAOptions
from gymforge.qa.fresh import FreshProcess

ENV = str(Path(__file__).with_name("dated_tool_env.py"))


def _shifted() -> bool:
    proc = FreshProcess("digits")
    try:
        proc.ready()
        return proc.clock_shift is not None
    finally:
        proc.close()


@pytest.fixture(autouse=True, scope="module")
def _needs_a_shifted_clock() -> None:
    if not _shifted():
        pytest.skip("libfaketime does not work here")


@pytest.mark.parametrize("how", ["library", "command"])
def test_a_date_from_an_mcp_tool_server_diverges_on_another_day(
    how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if how == "command":  # libfaketime's own wrapper, as where no library is found
        if shutil.which("faketime") is None:
            pytest.skip("no faketime command")
        monkeypatch.setattr(clock, "library_dirs", lambda: [])
    report = run_qa(
        QATarget.load(f"{ENV}:DatedToolEnv"), QAOptions(episodes=4), only=["replay_determinism"]
    )
    (check,) = report.checks
    assert not check.passed, check.details
    assert "only with the clock shifted" in check.details
    assert "tool_result" in check.details


@pytest.mark.skipif(shutil.which("env") is None, reason="needs env(1)")
def test_a_tool_the_clock_cannot_reach_is_named() -> None:
    report = run_qa(
        QATarget.load(f"{ENV}:ClockProofToolEnv"),
        QAOptions(episodes=4),
        only=["replay_determinism"],
    )
    (check,) = report.checks
    assert check.passed, check.details
    assert "not reaching its tool subprocesses" in check.details
    (tool,) = check.metrics["clock_not_shifted_in"]
    assert tool.endswith("date_server.py") and tool.startswith("python")
