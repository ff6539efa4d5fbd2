"""The shell endpoint and the shell capability on their own: what the endpoint refuses
before an episode sees anything, and how a shell tool's result becomes output and an exit
code."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gymforge.serve.harness.bridge import HarnessBridge
from gymforge.serve.harness.shell import MAX_BODY
from gymforge.tools.shell import LIMIT_EXIT, REFUSED_EXIT, ShellTool
from tests.evaluate.eval_helpers import run_cli


def post(url: str, body: bytes, token: str | None) -> tuple[int, Any]:
    req = urllib.request.Request(url, data=body, method="POST")
    req.add_header("Content-Type", "application/json")
    if token is not None:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


@pytest.fixture
def bridge() -> Iterator[HarnessBridge]:
    b = HarnessBridge("runner-token").start()
    try:
        yield b
    finally:
        b.stop()


def test_the_endpoint_refuses_before_the_episode_sees_anything(bridge: HarnessBridge) -> None:
    loop = asyncio.new_event_loop()
    try:
        shell = bridge.open(loop, [], token="episode-token", shell=True)
        tools = bridge.open(loop, [], token="tools-token")
        url = bridge.channel_url(shell)
        assert "/sh/" in url and "/sh/" not in bridge.channel_url(tools)
        ok = json.dumps({"command": "true"}).encode()
        assert post(url, ok, None)[0] == 401
        assert post(url, ok, "tools-token")[0] == 403
        assert post(url, ok, "runner-token")[0] == 403  # the runner's token opens no shell
        assert post(url, b"not json", "episode-token")[0] == 400
        assert post(url, json.dumps({"command": 1}).encode(), "episode-token")[0] == 400
        extra = json.dumps({"command": "true", "timeout": 9}).encode()
        assert post(url, extra, "episode-token")[0] == 400
        big = json.dumps({"command": "x" * (MAX_BODY + 1)}).encode()
        assert post(url, big, "episode-token")[0] == 413
        # a tools-mode channel has no shell; a workspace channel has no MCP tools
        tools_shell = url.replace(shell.id, tools.id)
        assert post(tools_shell, ok, "tools-token")[0] == 404
        mcp = bridge.channel_url(tools).replace(tools.id, shell.id)
        assert post(mcp, b"{}", "episode-token")[0] == 404
        bridge.close(shell)
        assert post(url, ok, "episode-token")[0] == 404
        assert shell.events.empty()  # nothing reached the episode
    finally:
        loop.close()


TOOL = ShellTool("run_command", via_sh=True)


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        ({"ok": True, "content": {"exit_code": 3, "stdout": "o", "stderr": "e"}}, ("o", "e", 3)),
        ({"ok": True, "content": {"exit_code": 0, "output": "both"}}, ("both", "", 0)),
        (
            {"ok": True, "content": {"exit_code": None, "stdout": "", "limits_hit": ["wall_time"]}},
            ("", "gymforge: the command was stopped by its limits (wall_time)\n", LIMIT_EXIT),
        ),
        (
            {"ok": True, "content": {"exit_code": 124, "output": "", "timed_out": True}},
            ("", "gymforge: the command was stopped by its limits\n", 124),
        ),
        (
            {"ok": True, "content": {"exit_code": -9, "stdout": "x", "limits_hit": ["output"]}},
            ("x", "gymforge: the command was stopped by its limits (output)\n", LIMIT_EXIT),
        ),
        ({"ok": True, "content": {"exit_code": None, "stdout": ""}}, ("", "", REFUSED_EXIT)),
        (
            {"ok": False, "error": {"kind": "invalid_arguments", "message": "too long"}},
            ("", "gymforge: invalid_arguments: too long\n", REFUSED_EXIT),
        ),
        (None, ("", "gymforge: the step gave no tool result\n", REFUSED_EXIT)),
    ],
)
def test_a_tool_result_as_shell_output(result: Any, expected: tuple[str, str, int]) -> None:
    out = TOOL.outcome(result)
    assert (out.stdout, out.stderr, out.exit_code) == expected


def test_a_command_goes_to_the_tool_as_one_argument() -> None:
    assert TOOL.arguments("echo 'a b' | wc -c") == {
        "command": "sh -c 'echo '\"'\"'a b'\"'\"' | wc -c'"
    }
    assert ShellTool("run").arguments("ls | head") == {"command": "ls | head"}


def test_the_cli_refuses_workspace_mode_without_a_shell_tool(tmp_path: Path) -> None:
    r = run_cli(
        "run", "ledger", "-n", "1", "--policy", "harness-cmd:true", "--harness-mode",
        "workspace", "--base-url", "http://127.0.0.1:9/v1", "--out", tmp_path / "run",
    )  # fmt: skip
    assert r.code == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), r.stderr
    assert "ledger environment has no shell tool" in lines[0]
    assert not (tmp_path / "run" / "trajectories.jsonl").exists()
