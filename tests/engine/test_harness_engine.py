"""The proxy and a harness on the real vLLM engine (``make test-engine``).

- a four-turn conversation through ``gymforge proxy``: turn 1 passes through, turns 2-4
  continue token-in on vLLM's own ``/tokenize`` and token-id completions; every turn's
  prompt ids extend the last prompt + completion, and the recorded logprobs match the ids;
- the LangGraph example under ``gymforge eval`` on ``ledger``: its episodes are recorded at
  ``tokens`` capture and export for training.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai
import pytest

from gymforge.serve.proxy.server import ProxyConfig, ProxyServer
from gymforge.trajectory.export import export
from gymforge.trajectory.io import read_episodes
from tests.evaluate.eval_helpers import run_cli

TOKEN = "engine-proxy-token"


def test_proxy_continues_token_in_on_vllm(engine: Any, figure: Callable[[str, Any], None]) -> None:
    with ProxyServer(ProxyConfig(upstream=engine.base_url, token=TOKEN)) as proxy:
        url = proxy.open_episode("engine-1")
        client = openai.OpenAI(base_url=url, api_key=TOKEN, max_retries=0)
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Count with me."},
        ]
        for k in range(4):
            r = client.chat.completions.create(
                model="tiny",
                messages=messages,  # type: ignore[arg-type]
                max_tokens=24,
                temperature=1.3,
                seed=k,
            )
            messages.append({"role": "assistant", "content": r.choices[0].message.content or ""})
            messages.append({"role": "user", "content": f"And {k + 1}?"})
        t = proxy.close_episode("engine-1")
    assert [turn.mode for turn in t.turns] == ["pass-through"] + ["token-in"] * 3
    assert t.branches == 1
    for prev, nxt in itertools.pairwise(t.turns):
        assert prev.prompt_token_ids is not None and prev.completion_token_ids is not None
        full = prev.prompt_token_ids + prev.completion_token_ids
        assert nxt.prompt_token_ids is not None and nxt.prompt_token_ids[: len(full)] == full
    for turn in t.turns:
        assert turn.logprobs is not None and turn.completion_token_ids is not None
        assert len(turn.logprobs) == len(turn.completion_token_ids)
    figure("proxy on vLLM", f"{len(t.turns)} turns, one branch, token-in after turn 1")


@pytest.mark.parametrize("env", ["ledger"])
def test_langgraph_harness_under_eval_on_vllm(
    engine: Any, env: str, figure: Callable[[str, Any], None], tmp_path: Path
) -> None:
    out = tmp_path / env
    res = run_cli(
        "eval",
        env,
        "--policy",
        "harness:examples/langgraph_agent/agent.py:run",
        "--base-url",
        engine.base_url,
        "--max-tokens",
        "32",
        "-n",
        "4",
        "--out",
        out,
    )
    assert res.code == 0, res.stderr
    data = json.loads((out / "eval.json").read_text())
    logs = read_episodes(out / "trajectories.jsonl")
    assert data["metrics"]["episodes"] == len(logs) == 4
    for log in logs:
        for step in log.steps[1:]:
            assert step.policy is not None and step.policy.model_turns
            assert {t["capture_level"] for t in step.policy.model_turns} == {"tokens"}
    report = export(out / "trajectories.jsonl", "trl", tmp_path / "trl.jsonl")
    figure("LangGraph harness on vLLM", f"{len(logs)} episodes, TRL rows {report.written}")
    assert report.written == len(logs) and not report.refused
