"""What the real engine does that a naive mock would not, for the chat (``openai:``) path:
the tool-call grammar that ``parallel_tool_calls`` switches on, and vLLM's stop strings."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from openai_helpers import FAST_RETRY, arun, ledger_oracle_responder

from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout import LocalExecutor, RunSpec
from gymforge.rollout.openai_policy import OpenAIPolicyFactory
from gymforge.rollout.runner import run
from gymforge.rollout.server import Sampling
from gymforge.testing import FORCED_TOKENS, OpenAITestServer
from gymforge.trajectory.export import export
from gymforge.trajectory.io import read_episodes

TASKS = LedgerEnv.tasks.sample(3, 8, "train", difficulties=[1])


def play(srv: OpenAITestServer, out: Path, sampling: Sampling) -> Any:
    factory = OpenAIPolicyFactory("m", base_url=srv.base_url, sampling=sampling, retry=FAST_RETRY)

    async def go() -> Any:
        try:
            return await run(
                RunSpec(env="ledger", policy="factory", jobs=[(t, 0) for t in TASKS], out=out),
                LocalExecutor(LedgerEnv, factory),
            )
        finally:
            await factory.aclose()

    return arun(go(), 60)


def test_parallel_tool_calls_grammar_breaks_prefix_stability(tmp_path: Path) -> None:
    with OpenAITestServer(ledger_oracle_responder(TASKS), noncanonical_grammar=True) as srv:
        default = play(srv, tmp_path / "default", Sampling())
        opted = play(srv, tmp_path / "opted", Sampling(parallel_tool_calls=False))
    assert all(e["success"] for e in default.episodes + opted.episodes)
    ok = export(tmp_path / "default" / "trajectories.jsonl", "trl", tmp_path / "a.jsonl")
    assert ok.written == len(TASKS) and not ok.refused
    bad = export(tmp_path / "opted" / "trajectories.jsonl", "trl", tmp_path / "b.jsonl")
    assert bad.written == 0 and bad.refused == {"prefix_mismatch": len(TASKS)}
    forced = [
        (t, lp)
        for log in read_episodes(tmp_path / "opted" / "trajectories.jsonl")
        for s in log.steps
        if s.policy is not None
        for t, lp in zip(s.policy.completion_token_ids or [], s.policy.logprobs or [], strict=True)
        if t in FORCED_TOKENS
    ]
    assert forced and {lp for _, lp in forced} == {0.0}  # forced, not sampled


def test_chat_stop_strings_behave_like_vllm() -> None:
    from gymforge.testing import fake_tokenize

    reply = "Let me think. DONE and more"
    with OpenAITestServer(lambda _req: reply) as srv:

        async def ask(include: bool) -> dict[str, Any]:
            factory = OpenAIPolicyFactory("m", base_url=srv.base_url, retry=FAST_RETRY)
            extra = {"include_stop_str_in_output": True} if include else {}
            body = {
                "model": "m",
                "messages": [{"role": "user", "content": "hi"}],
                "stop": ["DONE"],
                "return_token_ids": True,
                **extra,
            }
            client = factory.client()
            data = await client.post("/chat/completions", body=body, cast_to=dict)
            await factory.aclose()
            return dict(data)

        cut, kept = asyncio.run(ask(False)), asyncio.run(ask(True))
    for data in (cut, kept):
        choice = data["choices"][0]
        assert choice["finish_reason"] == "stop" and choice["stop_reason"] == "DONE"
        assert choice["token_ids"] == fake_tokenize("Let me think. DONE")  # ids keep it
    assert cut["choices"][0]["message"]["content"] == "Let me think. "  # the text does not
    assert kept["choices"][0]["message"]["content"] == "Let me think. DONE"
