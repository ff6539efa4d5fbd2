"""``gymforge qa`` on a real OpenEnv 0.10 environment: ``openenv init``'s template, generated
by OpenEnv's CLI and served, unmodified, by its own uvicorn app on 127.0.0.1. Every check's
status and reason is pinned, including what OpenEnv does not supply and the one check the
template's default session cap (``max_concurrent_envs=1``) fails."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from interop_helpers import by_name, gymforge_cli, needs, qa_report
from openenv_server import openenv_init, serve

pytestmark = needs("openenv")

NOT_SUPPLIED = "not applicable: not supplied by the framework (OpenEnv 0.10.0): "


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    env_dir = openenv_init("echo_env", tmp_path_factory.mktemp("openenv"))
    with serve(env_dir) as url:
        yield url


@pytest.fixture(scope="module")
def report(server: str) -> dict[str, Any]:
    return qa_report(f"openenv:{server}", "--episodes", "12")


def test_report_header(report: dict[str, Any], server: str) -> None:
    assert report["env"] == f"openenv:{server}"
    assert report["passed"] is False  # reset_isolation: see below
    assert report["not_applicable"] == [
        "scripted_baselines", "verifier_redteam", "error_paths", "heldout_exclusion",
    ]  # fmt: skip


def test_checks_that_pass(report: dict[str, Any]) -> None:
    checks = by_name(report)
    ran = {
        "replay_determinism": "steps replayed identically on a fresh instance",
        "truncation_accounting": "all truncated (max_tokens), never terminated",
        "distribution_audit": "0.0% duplicates",
        "throughput": "steps/s at concurrency 1",
        "trajectory_schema": "validate against the JSON Schema",
    }
    for name, phrase in ran.items():
        check = checks[name]
        assert (check["status"], check["applicable"], check["passed"]) == ("pass", True, True), (
            check
        )
        assert phrase in check["details"], check


def test_reset_isolation_needs_two_sessions(report: dict[str, Any]) -> None:
    """The check holds a reused and a fresh instance at once; the template's app allows one
    WebSocket session (``max_concurrent_envs=1``), so the second waits for a slot and gives
    up: an infrastructure error naming the cap, not a verdict on isolation."""
    check = by_name(report)["reset_isolation"]
    assert (check["status"], check["applicable"]) == ("fail", True), check
    assert "InfraError" in check["details"] and "CAPACITY_REACHED" in check["details"], check


def test_not_supplied(report: dict[str, Any]) -> None:
    checks = by_name(report)
    for name in ("scripted_baselines", "verifier_redteam", "error_paths"):
        check = checks[name]
        assert check["status"] == "not_applicable", check
        assert check["details"] == (
            NOT_SUPPLIED + "no oracle: OpenEnv environments carry no reference solution"
        ), check
    check = checks["heldout_exclusion"]
    assert check["status"] == "not_applicable", check
    assert (
        check["details"] == NOT_SUPPLIED + "the server has no Task API splits, so no held-out split"
    )


def test_episode_is_the_servers(server: str) -> None:
    """A reply is the template's ``message``; its reward is the server's (0.1 per character,
    at most 1); OpenEnv never ends the episode, so the budget truncates it."""
    import asyncio

    from gymforge.core.types import Reply
    from gymforge.registry.resolve import make_env

    env = make_env(f"openenv:{server}")

    async def play() -> list[Any]:
        task_id = env.tasks.sample(1, 0, "train")[0]  # type: ignore[attr-defined]
        obs = await env.reset(task_id, 5)
        assert "Echo Env environment ready!" in obs.messages[0].content
        results = [await env.step(Reply(text="hey"))]
        state = await env.snapshot()
        while not results[-1].done:
            results.append(await env.step(Reply(text="hello world")))
        await env.close()
        return [results, state]

    results, state = asyncio.run(play())
    assert results[0].reward_components == {"openenv.reward": pytest.approx(0.3)}
    assert '"echoed_message":"hey"' in results[0].observation.messages[0].content
    assert state["step_count"] == 1 and state["episode_id"].startswith("gymforge-")
    assert results[-1].truncated and not results[-1].terminated
    assert results[-1].info["end_reason"] == "max_steps" and results[-1].info["success"] is False
    assert [r.reward for r in results[1:]] == [1.0] * (len(results) - 1)


def test_no_server_is_one_line() -> None:
    proc = gymforge_cli("qa", "openenv:http://127.0.0.1:9", "--check", "throughput")
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "openenv:http://127.0.0.1:9: no OpenEnv server answers there" in lines[0]


def test_server_dies_mid_episode(tmp_path: Path) -> None:
    """A server that goes away mid-episode is an infrastructure error (retried, never
    scored), not the policy's failure."""
    import asyncio

    from gymforge.core.errors import InfraError
    from gymforge.core.types import Reply
    from gymforge.registry.resolve import make_env

    env_dir = openenv_init("dying_env", tmp_path)
    with serve(env_dir) as url:
        env = make_env(f"openenv:{url}")
        task_id = env.tasks.sample(1, 0, "train")[0]  # type: ignore[attr-defined]
        asyncio.run(env.reset(task_id, 0))
    with pytest.raises(InfraError, match="failed on step"):
        asyncio.run(env.step(Reply(text="anyone there?")))


def test_json_actions_are_checked_before_sending() -> None:
    """An action with several fields is the reply's JSON object, validated against the
    server's own action schema: a policy's bad action is an answer it can fix, never a
    server error counted as infrastructure."""
    from gymforge.envs.openenv_adapter.server import ServerInfo

    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "metadata": {"type": "object"},
            "code": {"type": "string"},
            "timeout_s": {"type": "number"},
        },
        "required": ["code", "timeout_s"],
    }
    server = ServerInfo("http://127.0.0.1:1", "coder", "1.0", schema, None, frozenset())
    assert server.text_field is None
    assert server.action_of('{"code": "print(1)", "timeout_s": 2}') == {
        "code": "print(1)",
        "timeout_s": 2,
    }
    assert server.action_of("print(1)") == (
        "Reply with one JSON object of the action's fields (code, metadata, timeout_s)."
    )
    assert server.action_of('{"code": "x"}') == (
        "Invalid action: the action: 'timeout_s' is a required property"
    )
    assert server.action_of('{"code": "x", "timeout_s": "soon"}') == (
        "Invalid action: timeout_s: 'soon' is not of type 'number'"
    )
