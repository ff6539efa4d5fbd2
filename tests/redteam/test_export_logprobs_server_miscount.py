"""Attack: the inference server answers a turn with more, fewer or no logprobs than tokens.

The token-in ``vllm:`` policy asks for the sampled tokens' logprobs; a server (or anything
between it and gymforge) that returns a ``token_logprobs`` list one short, or none at all, on
one turn made the policy record that turn's logprobs as None, and the TRL export then wrote
0.0 (probability one) for every model token of the turn, beside the real logprobs of the
episode's other turns. Success of the attack: a training row whose logprobs are not what the
server returned, which TRL's importance-sampling correction (on by default) reads as the
sampling distribution. The defence: a turn keeps the list the server returned, a miscounted
one makes the export refuse the episode (``logprobs_length_mismatch``), and a turn the
server gave none for is exported with null logprobs (unknown: TRL leaves the ratio at 1).
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gymforge.core.types import ToolCall
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout import LocalExecutor, RunSpec
from gymforge.rollout.runner import run
from gymforge.rollout.server import Retry
from gymforge.rollout.vllm_policy import VLLMPolicyFactory
from gymforge.serve.proxy.server import ProxyConfig, ProxyServer
from gymforge.testing import OpenAITestServer, ServedReply, ServedToolCall
from gymforge.testing.openai_server import chat as chat_server
from gymforge.testing.openai_server import token_in
from gymforge.trajectory.export import export
from gymforge.trajectory.io import read_episodes

TASKS = LedgerEnv.tasks.sample(2, 5, "train", difficulties=[1])
RETRY = Retry(max_attempts=2, base_delay=0.01, max_delay=0.05, call_timeout=10.0)


def oracle(task_ids: list[str]) -> Callable[[dict[str, Any]], ServedReply]:
    """Answers turn k of a ledger conversation with step k of the oracle's plan."""
    env = LedgerEnv()
    plans: dict[str, list[Any]] = {}
    for task_id in task_ids:
        task = env.tasks.resolve(task_id)
        plan = env.oracle_plan(task)
        assert plan is not None
        plans[task.prompt] = plan

    def respond(request: dict[str, Any]) -> ServedReply:
        messages = request["messages"]
        prompt = next(m["content"] for m in messages if m["role"] == "user")
        plan = plans[prompt]
        action = plan[min(sum(m["role"] == "assistant" for m in messages), len(plan) - 1)]
        if isinstance(action, ToolCall):
            return ServedReply(tool_calls=(ServedToolCall(action.name, dict(action.arguments)),))
        return ServedReply(content=action.text)

    return respond


def play(tmp_path: Path, answers: Callable[[dict[str, Any], int], dict[str, Any] | None]) -> Path:
    """Play the tasks with ``vllm:`` against a server whose logprobs ``answers`` rewrites
    (given the honest logprobs and the request's number)."""
    honest = token_in._logprobs
    count = {"n": 0}

    def served(ids: list[int], top: int) -> Any:
        count["n"] += 1
        return answers(honest(ids, top), count["n"])

    mp = pytest.MonkeyPatch()
    mp.setattr(token_in, "_logprobs", served)
    try:
        with OpenAITestServer(oracle(TASKS)) as srv:
            made = VLLMPolicyFactory("m", base_url=srv.base_url, retry=RETRY)

            async def go() -> Any:
                try:
                    spec = RunSpec(
                        env="ledger",
                        policy="vllm",
                        jobs=[(t, 0) for t in TASKS],
                        out=tmp_path,
                        concurrency=1,
                    )
                    return await run(spec, LocalExecutor(LedgerEnv, made))
                finally:
                    await made.aclose()

            result = asyncio.run(go())
    finally:
        mp.undo()
    assert not result.errors
    return tmp_path / "trajectories.jsonl"


def rows_match_the_server(path: Path, out: Path) -> tuple[dict[str, int], list[str]]:
    """Export ``path`` and compare each row's model-token logprobs with the logprobs the
    turns recorded; returns the refusals and every row that carries other values."""
    report = export(path, "trl", out)
    rows = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    recorded = {
        log.episode_id: [
            lp
            for s in log.steps[1:]
            if s.policy is not None
            for lp in (s.policy.logprobs or [None] * len(s.policy.completion_token_ids or []))
        ]
        for log in read_episodes(path)
    }
    forged = []
    for row in rows:
        model = [lp for lp, m in zip(row["logprobs"], row["env_mask"], strict=True) if m]
        if model != recorded[row["episode_id"]]:
            forged.append(row["episode_id"])
    return dict(report.refused), forged


def test_one_logprob_short_is_refused_not_zero_filled(tmp_path: Path) -> None:
    def short_on_turn_two(lp: dict[str, Any], n: int) -> dict[str, Any]:
        if n % 3 == 2:
            lp = {**lp, "token_logprobs": lp["token_logprobs"][:-1]}
        return lp

    path = play(tmp_path, short_on_turn_two)
    refused, forged = rows_match_the_server(path, tmp_path / "trl.jsonl")
    assert forged == []
    assert refused == {"logprobs_length_mismatch": len(TASKS)}


def test_a_turn_without_logprobs_is_exported_as_unknown_not_zero(tmp_path: Path) -> None:
    def none_on_turn_two(lp: dict[str, Any], n: int) -> dict[str, Any] | None:
        return None if n % 3 == 2 else lp

    path = play(tmp_path, none_on_turn_two)
    refused, forged = rows_match_the_server(path, tmp_path / "trl.jsonl")
    assert forged == [] and refused == {}
    rows = [json.loads(line) for line in (tmp_path / "trl.jsonl").read_text().splitlines()]
    for row in rows:
        model = [lp for lp, m in zip(row["logprobs"], row["env_mask"], strict=True) if m]
        assert None in model and any(lp is not None for lp in model)
        assert all(
            lp == 0.0 for lp, m in zip(row["logprobs"], row["env_mask"], strict=True) if not m
        )


def test_the_proxy_keeps_a_miscounted_list_as_the_server_sent_it() -> None:
    """Through ``gymforge proxy`` (a harness's turns): the pass-through turn and the
    token-in turn after it keep the server's one-short lists, which the export refuses."""
    chat_honest, completions_honest = chat_server._logprobs, token_in._logprobs
    mp = pytest.MonkeyPatch()
    mp.setattr(chat_server, "_logprobs", lambda *a: chat_honest(*a)[:-1])

    def short(ids: list[int], top: int) -> dict[str, Any]:
        lp = completions_honest(ids, top)
        return {**lp, "token_logprobs": lp["token_logprobs"][:-1]}

    mp.setattr(token_in, "_logprobs", short)
    token = "proxy-token-for-tests"
    messages: list[dict[str, Any]] = [{"role": "user", "content": "hi"}]
    try:
        with (
            OpenAITestServer() as upstream,
            ProxyServer(ProxyConfig(upstream=upstream.base_url, token=token)) as proxy,
        ):
            url = proxy.open_episode("ep-short") + "/chat/completions"
            for _ in range(2):
                req = urllib.request.Request(
                    url,
                    data=json.dumps({"model": "m", "messages": messages}).encode(),
                    headers={
                        "Authorization": f"Bearer {token}",
                        "Content-Type": "application/json",
                    },
                )
                with urllib.request.urlopen(req, timeout=30) as r:
                    answer = json.loads(r.read())
                messages += [answer["choices"][0]["message"], {"role": "user", "content": "?"}]
            turns = proxy.transcript("ep-short").turns
    finally:
        mp.undo()
    assert [t.mode for t in turns] == ["pass-through", "token-in"]
    for t in turns:
        assert t.completion_token_ids and t.logprobs is not None
        assert len(t.logprobs) == len(t.completion_token_ids) - 1
