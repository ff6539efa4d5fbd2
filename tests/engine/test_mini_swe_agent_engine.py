"""mini-swe-agent (examples/mini_swe_agent) as a workspace harness on the real vLLM engine
(``make test-engine``; needs ``.venv-mini-swe-agent``, which ``make test-harness`` builds):
an ``swe`` episode runs to its end through the proxy, every model turn recorded with vLLM's
own token ids, each prompt extending the previous turn's, and the environment judges it.

The tiny engine model writes noise, not fixes: mini-swe-agent answers a malformed answer
with a format error, dropping the answer from its history (so the proxy starts a new branch:
each branch extends token-exact), until its step limit or its own give-up, and the
repository it leaves is judged like any other."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gymforge.trajectory.io import read_episodes
from tests.evaluate.eval_helpers import run_cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
from mini_swe_agent_helpers import AGENT, assert_token_exact, mini_swe_agent_policy


def test_mini_swe_agent_on_vllm(
    engine: Any, figure: Callable[[str, Any], None], tmp_path: Path
) -> None:
    policy = f"{mini_swe_agent_policy()} --max-tokens 48 --step-limit 4"
    assert str(AGENT) in policy
    out = tmp_path / "run"
    res = run_cli(
        "run",
        "swe",
        "--policy",
        policy,
        "--harness-mode",
        "workspace",
        "--base-url",
        engine.base_url,
        "-n",
        "1",
        "--max-retries",
        "0",
        "--out",
        out,
    )
    assert res.code == 0, res.stderr
    [log] = read_episodes(out / "trajectories.jsonl")
    assert log.end is not None  # judged by the environment, not an infrastructure error
    turns = [t for s in log.steps[1:] if s.policy for t in s.policy.model_turns or []]
    assert 1 <= len(turns) <= 4
    assert_token_exact(turns, one_branch=False)
    figure("mini-swe-agent on vLLM", f"{len(turns)} turns, token-exact, reward {log.end.reward}")
