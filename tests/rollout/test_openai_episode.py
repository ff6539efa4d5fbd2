"""Whole ledger episodes driven through OpenAIPolicy, the SDK and the local server."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from openai_helpers import arun, ledger_oracle_responder

from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout import EpisodeKeys, run_episode
from gymforge.rollout.openai_policy import OpenAIPolicyFactory
from gymforge.testing import OpenAITestServer, fake_tokenize, render_prompt
from gymforge.trajectory.io import seal_episode

TASKS = LedgerEnv.tasks.sample(6, 21, "train", difficulties=[1])


def keys(i: int, task_id: str, checkpoint: str) -> EpisodeKeys:
    return EpisodeKeys(
        run_id="r",
        episode_id=f"r-{i}",
        task_id=task_id,
        seed=i,
        env_id=LedgerEnv.spec.id,
        env_version=LedgerEnv.spec.version,
        renderer_version=LedgerEnv.spec.renderer_version,
        policy_checkpoint=checkpoint,
    )


async def episodes(factory: OpenAIPolicyFactory, task_ids: list[str]) -> list[list[dict[str, Any]]]:
    async def one(i: int, task_id: str) -> list[dict[str, Any]]:
        env = LedgerEnv()
        try:
            return await run_episode(env, factory(), keys(i, task_id, factory.checkpoint))
        finally:
            await env.close()

    try:
        return await asyncio.gather(*(one(i, t) for i, t in enumerate(task_ids)))
    finally:
        await factory.aclose()


def test_ledger_episodes_succeed_with_token_capture() -> None:
    with OpenAITestServer(ledger_oracle_responder(TASKS)) as srv:
        factory = OpenAIPolicyFactory("ledger-oracle", base_url=srv.base_url, weight_version="7")
        runs = arun(episodes(factory, TASKS))
    requests = {json.dumps(r["messages"]): r for r in srv.requests}
    for records in runs:
        lines = seal_episode(records)  # schema-valid, digest-chained
        assert len(lines) == len(records)
        steps, episode = records[1:-1], records[-1]
        assert episode["success"] is True and episode["terminated"] is True
        assert {s["policy"]["capture_level"] for s in steps} == {"tokens"}
        assert {s["policy"]["weight_version"] for s in steps} == {"7"}
        assert steps[-1]["action"]["kind"] == "reply"
        assert steps[0]["action"]["call_id"].startswith("chatcmpl-tool-")
        # each turn's prompt ids are exactly the server's tokens of the transcript it was sent
        prompts = {tuple(s["policy"]["prompt_token_ids"]) for s in steps}
        served = {
            tuple(fake_tokenize(render_prompt(r["messages"], r.get("tools"))))
            for r in requests.values()
        }
        assert prompts <= served
    assert len(srv.requests) == sum(len(r) - 2 for r in runs)


def test_malformed_output_takes_the_envs_malformed_path() -> None:
    with OpenAITestServer(ledger_oracle_responder(TASKS[:1])) as srv:
        srv.inject("malformed")
        factory = OpenAIPolicyFactory("ledger-oracle", base_url=srv.base_url)
        (records,) = arun(episodes(factory, TASKS[:1]))
    seal_episode(records)
    bad = records[1]
    assert bad["action"]["kind"] == "invalid"
    assert "not valid JSON" in bad["info"]["malformed"]
    assert bad["policy"]["capture_level"] == "tokens"
    assert "could not be parsed" in bad["observation"]["rendered"][0]["content"]
    assert records[-1]["success"] is True  # recover mode: the model carried on
    second = srv.requests[1]["messages"]
    assert second[-2] == {"role": "assistant", "content": bad["action"]["raw"]}
    assert second[-1]["role"] == "user"


def test_replay_checks_structured_calls_against_the_recorded_policy_output() -> None:
    """An OpenAI policy's structured tool calls are recorded verbatim with the turn, so
    replay re-parses them: the genuine episodes pass, and an edited call is caught."""
    from gymforge.rollout.replay import policy_parse, replay_episode
    from gymforge.trajectory.io import sealed_log

    with OpenAITestServer(ledger_oracle_responder(TASKS[:2])) as srv:
        factory = OpenAIPolicyFactory("ledger-oracle", base_url=srv.base_url)
        runs = arun(episodes(factory, TASKS[:2]))
    for records in runs:
        steps = records[1:-1]
        assert steps[0]["policy"]["tool_calls"][0]["function"]["name"] == steps[0]["action"]["name"]
        assert all(policy_parse(s["policy"], s["action"]) is None for s in steps)
        n, divergence = arun(replay_episode(LedgerEnv(), sealed_log(records)))
        assert divergence is None and n == len(steps) + 1
        call = steps[0]["policy"]["tool_calls"][0]["function"]
        call["arguments"] = call["arguments"].replace("}", ', "memo": "forged"}', 1)
        n, divergence = arun(replay_episode(LedgerEnv(), sealed_log(records)))
        assert divergence is not None and (divergence.step, divergence.field) == (1, "policy")
