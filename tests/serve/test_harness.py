"""Harness policies: an outside agent (its own loop, the real openai SDK, MCP tools) plays
gymforge episodes behind the proxy; its trajectories are ordinary ones."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gymforge.registry.resolve import make_env
from gymforge.rollout.executors import executor_for
from gymforge.rollout.plan import prepare
from gymforge.rollout.replay import replay_file
from gymforge.rollout.runner import run_sync
from gymforge.rollout.spec import RunSpec
from gymforge.testing.openai_server import OpenAITestServer
from gymforge.testing.openai_server.fake import (
    ServedReply,
    ServedToolCall,
    fake_tokenize,
    render_prompt,
    scripted_responder,
)
from gymforge.trajectory.export import export, trl_row
from gymforge.trajectory.io import read_episodes, verify_chain
from tests.serve.harness_agents import AGENTS, run_harness

HERE = Path(__file__).resolve().parent
REPLIES = [
    ServedReply(tool_calls=(ServedToolCall("search_customers", {"name": "a"}),)),
    ServedReply(tool_calls=(ServedToolCall("no_such_tool", {}),)),
    "I could not make the transfers.",
]


@pytest.fixture
def upstream() -> Iterator[OpenAITestServer]:
    with OpenAITestServer(scripted_responder(REPLIES)) as server:
        yield server


def test_harness_episode_is_an_ordinary_trajectory(
    upstream: OpenAITestServer, tmp_path: Path
) -> None:
    result = run_harness(f"harness:{AGENTS}:tool_agent", upstream, tmp_path)
    assert not result.errors
    [log] = read_episodes(tmp_path / "trajectories.jsonl")
    actions = [s.action for s in log.steps[1:]]
    assert [a.kind for a in actions] == ["tool_call", "tool_call", "reply"]  # type: ignore[union-attr]
    assert actions[0].name == "search_customers"  # type: ignore[union-attr]
    # the unknown tool is a step like any policy's, answered with the structured error
    unknown = log.steps[2]
    assert unknown.tool_result is not None and unknown.tool_result["ok"] is False
    assert unknown.tool_result["error"]["kind"] == "unknown_tool"
    assert actions[2].text == "I could not make the transfers."  # type: ignore[union-attr]
    # every step carries the model requests behind it, with the exact ids the server gave:
    # token-in prompts are exactly the canonical rendering of the whole conversation so far
    tools = upstream.requests[0]["tools"]  # as sent (records store JSON with sorted keys)
    for step in log.steps[1:]:
        assert step.policy is not None and step.policy.capture_level == "tokens"
        [turn] = step.policy.model_turns or []
        rendered = fake_tokenize(render_prompt(turn["messages"], tools))
        assert turn["prompt_token_ids"] == rendered
        assert turn["branch"] == 0
    sent = [r["prompt"] for r in upstream.requests if "prompt" in r]
    assert sent == [s.policy.model_turns[0]["prompt_token_ids"] for s in log.steps[2:]]  # type: ignore[union-attr,index]
    modes = [s.policy.model_turns[0]["mode"] for s in log.steps[1:]]  # type: ignore[union-attr,index]
    assert modes == ["pass-through", "token-in", "token-in"]
    # the tool results the harness saw are the environment's observations
    second_prompt = log.steps[2].policy.model_turns[0]["messages"]  # type: ignore[union-attr,index]
    assert second_prompt[-1]["role"] == "tool" and '"ok":true' in second_prompt[-1]["content"]
    # replay from the recorded actions reproduces the episode exactly
    report = asyncio.run(replay_file(tmp_path / "trajectories.jsonl", make_env))
    assert report.divergence is None and report.episodes == 1
    # and it exports for training as one row, with the proxy's exact tokens spliced
    rep = export(tmp_path / "trajectories.jsonl", "trl", tmp_path / "trl.jsonl")
    assert rep.written == 1, rep.as_dict()
    [row] = [json.loads(line) for line in (tmp_path / "trl.jsonl").read_text().splitlines()]
    turns = [s.policy.model_turns[0] for s in log.steps[1:]]  # type: ignore[union-attr,index]
    assert row["prompt_ids"] == turns[0]["prompt_token_ids"]
    assert (
        row["completion_ids"][: len(turns[0]["completion_token_ids"])]
        == turns[0]["completion_token_ids"]
    )
    full = turns[-1]["prompt_token_ids"] + turns[-1]["completion_token_ids"]
    assert row["prompt_ids"] + row["completion_ids"] == full
    assert sum(row["env_mask"]) == sum(len(t["completion_token_ids"]) for t in turns)
    assert row["branch"] == 0 and row["branches"] == 1


def test_two_harness_episodes_at_once_keep_their_own_turns(
    upstream: OpenAITestServer, tmp_path: Path
) -> None:
    result = run_harness(f"harness:{AGENTS}:tool_agent", upstream, tmp_path, n=4, concurrency=4)
    assert not result.errors
    logs = read_episodes(tmp_path / "trajectories.jsonl")
    assert len(logs) == 4
    prompts = set()
    for log in logs:
        first_user = log.steps[0].observation.rendered[-1].content
        prompts.add(first_user)
        for step in log.steps[1:]:
            assert step.policy is not None and step.policy.model_turns  # none went missing
            for turn in step.policy.model_turns:
                users = [m["content"] for m in turn["messages"] if m["role"] == "user"]
                assert users == [first_user]  # exactly this episode's conversation
    assert len(prompts) == 4


def test_crashing_harness_is_an_infrastructure_error(
    upstream: OpenAITestServer, tmp_path: Path
) -> None:
    result = run_harness(f"harness:{AGENTS}:crashing_agent", upstream, tmp_path, max_retries=1)
    assert result.errors and "the harness fell over" in str(result.errors[0])
    path = tmp_path / "trajectories.jsonl"
    assert not path.exists() or read_episodes(path) == []  # nothing scored
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["infra_errors"] >= 1


def test_harness_command_gets_its_environment(upstream: OpenAITestServer, tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text(
        "import json, os, openai\n"
        "ctx = json.load(open(os.environ['GYMFORGE_PROMPT_FILE']))\n"
        "assert ctx['mcp_url'] == os.environ['GYMFORGE_MCP_URL']\n"
        "c = openai.OpenAI(max_retries=0)\n"  # OPENAI_BASE_URL / OPENAI_API_KEY from the env
        "r = c.chat.completions.create(model=os.environ['GYMFORGE_MODEL'],"
        " messages=ctx['messages'])\n"
        "print('final:', r.choices[0].message.content)\n"
    )
    replies = scripted_responder(["no tools for me"])
    with OpenAITestServer(replies) as plain:
        result = run_harness(f"harness-cmd:{sys.executable} {script}", plain, tmp_path)
    assert not result.errors, result.errors
    [log] = read_episodes(tmp_path / "trajectories.jsonl")
    [step] = log.steps[1:]
    assert step.action.text == "final: no tools for me"  # type: ignore[union-attr]
    assert step.policy is not None and step.policy.model_turns
    assert step.policy.model_turns[0]["mode"] == "pass-through"


def test_failing_harness_command_is_retried_then_an_error(
    upstream: OpenAITestServer, tmp_path: Path
) -> None:
    cmd = f"{sys.executable} -c \"import sys; sys.exit('no luck')\""
    result = run_harness(f"harness-cmd:{cmd}", upstream, tmp_path, max_retries=1)
    assert result.errors and "exited with code 1" in str(result.errors[0])
    assert "no luck" in str(result.errors[0])


def test_harness_crashing_after_it_acted_is_a_counted_failure(
    upstream: OpenAITestServer, tmp_path: Path
) -> None:
    """Once the harness has acted, its crash is the policy's failure, never a retry
    (``tests/redteam/test_harness_crash_hides_failure.py``)."""
    result = run_harness(
        f"harness:{AGENTS}:crash_after_one_call", upstream, tmp_path, max_retries=2
    )
    assert not result.errors, result.errors
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["infra_retries"] == 0 and summary["infra_errors"] == 0
    assert summary["failure_reasons"] == {"harness_crashed": 1}
    [log] = read_episodes(tmp_path / "trajectories.jsonl")
    assert log.end is not None and log.end.truncated and not log.end.success
    assert [s.action.kind for s in log.steps[1:]] == ["tool_call"]  # type: ignore[union-attr]
    verify_chain(log)


def test_harness_past_its_wall_clock_is_truncated(
    upstream: OpenAITestServer, tmp_path: Path
) -> None:
    run = RunSpec(env="ledger", policy=f"harness:{AGENTS}:sleeper", n=1, seed=11, out=tmp_path)
    options = {"base_url": upstream.base_url, "wall_clock_s": 0.5, "grace_s": 0.1}
    ready = prepare(run, policy_options=options)
    try:
        result = run_sync(ready.spec, executor_for(ready.spec, ready.handle, ready.source))
    finally:
        assert ready.source.close is not None
        asyncio.run(ready.source.close())
    assert not result.errors
    [log] = read_episodes(tmp_path / "trajectories.jsonl")
    assert log.end is not None and log.end.truncated and not log.end.success
    assert log.end.failure_reason == "harness_timeout"
    assert len(log.steps) == 1  # nothing but the reset: the harness never acted
    verify_chain(log)  # a policy-side end is a valid episode


def test_rewritten_history_exports_one_row_per_branch(tmp_path: Path) -> None:
    replies = scripted_responder(
        [ServedReply(tool_calls=(ServedToolCall("search_customers", {"name": "a"}),)), "done"]
    )
    with OpenAITestServer(replies) as server:
        result = run_harness(f"harness:{AGENTS}:rewriting_agent", server, tmp_path)
    assert not result.errors
    [log] = read_episodes(tmp_path / "trajectories.jsonl")
    turns = [t for s in log.steps[1:] for t in s.policy.model_turns or []]  # type: ignore[union-attr]
    assert [t["branch"] for t in turns] == [0, 1]
    assert [t["mode"] for t in turns] == ["pass-through", "pass-through"]
    rep = export(tmp_path / "trajectories.jsonl", "trl", tmp_path / "trl.jsonl")
    rows = [json.loads(line) for line in (tmp_path / "trl.jsonl").read_text().splitlines()]
    assert rep.written == 1 and len(rows) == 2  # one episode, two rows
    assert [(r["branch"], r["branches"]) for r in rows] == [(0, 2), (1, 2)]
    assert {r["reward"] for r in rows} == {log.end.reward}  # type: ignore[union-attr]
    for row, turn in zip(rows, turns, strict=True):
        assert row["prompt_ids"] == turn["prompt_token_ids"]
        assert row["completion_ids"] == turn["completion_token_ids"]
    # a trainer's rollout_func needs one row per rollout: a branched episode is refused, or
    # cut to the branch the harness ended on (GymforgeRollout: its reward stays counted)
    assert trl_row(log) == "branched_history"
    cut = trl_row(log, cut=True)
    assert isinstance(cut, dict) and cut["cut"] == "branched_history"
    assert cut["completion_ids"] == turns[-1]["completion_token_ids"]
    assert cut["reward"] == log.end.reward and "branch" not in cut  # type: ignore[union-attr]


def test_the_harness_flags_reach_the_policy_and_other_policies_refuse_them(
    upstream: OpenAITestServer, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from gymforge.cli import app

    runner = CliRunner()
    args = ["run", "ledger", "-n", "1", "--seed", "11", "--json", "--base-url", upstream.base_url]
    timed = [*args, "--harness-time-limit", "0.5", "--harness-grace", "0.1"]
    out = tmp_path / "run"
    r = runner.invoke(app, [*timed, "--policy", f"harness:{AGENTS}:sleeper", "--out", str(out)])
    assert r.exit_code == 0, r.output
    [log] = read_episodes(out / "trajectories.jsonl")
    assert log.end is not None and log.end.failure_reason == "harness_timeout"
    r = runner.invoke(app, [*timed, "--policy", "oracle", "--out", str(tmp_path / "o")])
    assert r.exit_code != 0
    assert "--harness-grace, --harness-time-limit: for harness: and harness-cmd:" in r.output
