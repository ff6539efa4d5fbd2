"""Exports: TRL rows from exact server tokens (never re-tokenised), SFT transcripts, parquet."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from gymforge.core.types import Observation
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout import (
    CapturedTurn,
    EpisodeContext,
    LocalExecutor,
    OraclePolicy,
    PolicyTurn,
    RunSpec,
    run,
)
from gymforge.trajectory.export import export

PAIRS = [(t, 1) for t in LedgerEnv.tasks.sample(3, 0, difficulties=[1])]


class TokenOracle(OraclePolicy):
    """The oracle, dressed as a model server: each turn's prompt ids extend the previous
    prompt + completion (a prefix-stable chat template), ids and logprobs made up."""

    name = checkpoint = "token-oracle"
    version = 7
    prefix_stable = True

    async def start(self, ctx: EpisodeContext) -> None:
        await super().start(ctx)
        self.context: list[int] = [1, 2, 3]
        self.turn = 0

    def weight_version(self) -> int:
        return type(self).version

    async def act(self, observation: Observation) -> PolicyTurn:
        action = (await super().act(observation)).action
        self.turn += 1
        self.context += [100 + self.turn] * observation.tokens  # environment tokens
        prompt = list(self.context)
        if not self.prefix_stable and self.turn > 1:  # the template re-tokenised the last reply
            prompt[-observation.tokens - 1] = 999
        completion = [500 + self.turn, 600 + self.turn]
        self.context += completion
        return CapturedTurn(
            action,
            capture_level="tokens",
            prompt_token_ids=prompt,
            completion_token_ids=completion,
            logprobs=[-0.5, -0.25],
            finish_reason="stop",
            model="tiny",
            weight_version=str(self.version),
        )


def run_dir(tmp_path: Path, policy: Any) -> Path:
    asyncio.run(
        run(
            RunSpec(env="ledger", policy="policy", jobs=PAIRS, out=tmp_path),
            LocalExecutor(LedgerEnv, policy),
        )
    )
    return tmp_path / "trajectories.jsonl"


def test_trl_rows_splice_turns_with_env_mask(tmp_path: Path) -> None:
    path = run_dir(tmp_path, TokenOracle)
    report = export(path, "trl", tmp_path / "trl.jsonl")
    assert report.written == 3 and not report.refused
    for row in map(json.loads, (tmp_path / "trl.jsonl").read_text().splitlines()):
        ids, mask, lps = row["completion_ids"], row["env_mask"], row["logprobs"]
        assert len(ids) == len(mask) == len(lps)
        assert row["prompt_ids"][:3] == [1, 2, 3]
        model = [i for i, m in zip(ids, mask, strict=True) if m]
        assert model == [t for k in range(1, len(model) // 2 + 1) for t in (500 + k, 600 + k)]
        assert all(lp == 0.0 for lp, m in zip(lps, mask, strict=True) if not m)
        assert all(lp < 0 for lp, m in zip(lps, mask, strict=True) if m)
        assert row["success"] and row["reward"] > 0.9 and row["weight_versions"] == ["7"]


def test_trl_refuses_text_capture_and_prefix_instability(tmp_path: Path) -> None:
    scripted = run_dir(tmp_path / "a", OraclePolicy)
    assert export(scripted, "trl", tmp_path / "a.jsonl").refused == {"below_tokens_capture": 3}

    class Unstable(TokenOracle):
        prefix_stable = False

    unstable = run_dir(tmp_path / "b", Unstable)
    assert export(unstable, "trl", tmp_path / "b.jsonl").refused == {"prefix_mismatch": 3}


def test_staleness_refuse_and_flag(tmp_path: Path) -> None:
    path = tmp_path / "trajectories.jsonl"
    TokenOracle.version = 1
    asyncio.run(
        run(
            RunSpec(env="ledger", policy="TokenOracle", jobs=PAIRS[:1], out=tmp_path),
            LocalExecutor(LedgerEnv, TokenOracle),
        )
    )
    TokenOracle.version = 5
    asyncio.run(
        run(
            RunSpec(env="ledger", policy="TokenOracle", jobs=PAIRS[1:], out=tmp_path, resume=True),
            LocalExecutor(LedgerEnv, TokenOracle),
        )
    )
    TokenOracle.version = 7
    refused = export(path, "trl", tmp_path / "r.jsonl", max_staleness=2)
    assert refused.written == 2 and refused.refused == {"stale": 1}
    flagged = export(path, "trl", tmp_path / "f.jsonl", max_staleness=2, stale="flag")
    assert flagged.written == 3 and flagged.flagged_stale == 1
    rows = [json.loads(x) for x in (tmp_path / "f.jsonl").read_text().splitlines()]
    assert sum(r.get("stale", False) for r in rows) == 1


def test_sft_transcripts(tmp_path: Path) -> None:
    path = run_dir(tmp_path, OraclePolicy)
    assert export(path, "sft", tmp_path / "sft.jsonl", only_success=True).written == 3
    row = json.loads((tmp_path / "sft.jsonl").read_text().splitlines()[0])
    roles = [m["role"] for m in row["messages"]]
    assert roles[:2] == ["system", "user"] and roles[-1] == "assistant"
    calls = [m for m in row["messages"] if m.get("tool_calls")]
    tool_msgs = [m for m in row["messages"] if m["role"] == "tool"]
    assert calls and len(calls) == len(tool_msgs)
    assert calls[0]["tool_calls"][0]["function"]["name"] == "search_customers"
    assert row["tools"] and row["success"]


def test_parquet_step_table(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    path = run_dir(tmp_path, OraclePolicy)
    assert export(path, "parquet", tmp_path / "steps.parquet").written == 3
    table = pq.read_table(tmp_path / "steps.parquet")
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert table.num_rows == sum(r["record"] == "step" for r in lines)
    assert {"episode_id", "step", "reward", "terminated", "truncated"} <= set(table.column_names)
