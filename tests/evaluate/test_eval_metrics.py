"""Metrics and behavioural analysis over episode stats: synthetic cases with known answers,
plus stats read off a real ledger episode and a policy that cheats its way to success."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from gymforge.core.policy import EpisodeContext, PolicyTurn, scripted_env
from gymforge.core.types import Reply, ToolCall
from gymforge.envs.ledger import LedgerEnv
from gymforge.evaluate.analysis import failure_analysis, failure_log_rows, flag_for_review
from gymforge.evaluate.episodes import EpisodeStats, load_stats, oracle_path_lengths
from gymforge.evaluate.metrics import compute_metrics
from gymforge.evaluate.pipeline import EvalConfig, job_stats, write_eval
from gymforge.rollout import LocalExecutor, RunSpec
from gymforge.rollout.resolve import PolicySource, resolve_policy
from gymforge.rollout.runner import run
from gymforge.rollout.skilled import SkilledPolicy


def ep(
    i: int, *, task: str = "t0", success: bool = True, steps: int = 6, **kw: Any
) -> EpisodeStats:
    base: dict[str, Any] = {
        "episode_id": f"e{i}",
        "task_id": task,
        "seed": 0,
        "rollout": i,
        "family": "fam",
        "difficulty": 1,
        "split": "train",
        "success": success,
        "reward": 1.0 if success else 0.0,
        "components": {"task": 1.0 if success else 0.0, "step_cost": -0.01 * steps},
        "steps": steps,
        "terminated": True,
        "truncated": False,
        "failure_reason": None if success else "wrong",
        "tool_calls": steps - 1,
        "tools_used": ("look", "act"),
        "per_tool": {"look": (steps - 2, 0), "act": (1, 0)},
        "oracle_steps": 6,
    }
    base.update(kw)
    return EpisodeStats(**base)


def test_metrics_of_known_groups() -> None:
    # task a: 3/4, task b: 1/4, task c: 0/4 -> success 4/12; pass@4 = (1 + 1 + 0) / 3
    stats = [
        ep(i, task=t, success=i < wins, split="heldout" if t == "c" else "train")
        for t, wins in (("a", 3), ("b", 1), ("c", 0))
        for i in range(4)
    ]
    m = compute_metrics(stats, k=2)
    assert m["success"]["successes"] == 4 and m["success"]["n"] == 12
    assert m["pass@k"]["1"] == pytest.approx(4 / 12)
    assert m["pass@k"]["4"] == pytest.approx(2 / 3)
    assert m["pass@k"]["2"] == pytest.approx((1.0 + 0.5 + 0.0) / 3)
    assert m["pass^k"]["2"] == pytest.approx((0.5 + 0 + 0) / 3)
    assert m["pass^k"]["4"] == 0.0
    g = m["heldout_gap"]
    assert g["gap"] == pytest.approx(4 / 8 - 0 / 4) and g["lo"] < g["gap"] < g["hi"]
    assert [r["key"] for r in m["by_split"]] == ["heldout", "train"]
    rates = {r["task_id"]: r["pass_rate"] for r in m["pass_rates"]}
    assert rates == {"a": 0.75, "b": 0.25, "c": 0.0}
    assert m["reward"]["components"]["task"] == pytest.approx(4 / 12)
    assert m["steps"]["efficiency"]["mean"] == pytest.approx(1.0)
    assert m["tools"]["tool_calls"] == 12 * 5 and m["tools"]["tool_error_rate"] == 0.0


def test_gap_is_na_without_heldout_episodes() -> None:
    g = compute_metrics([ep(i) for i in range(3)])["heldout_gap"]
    assert g["gap"] is None and "no held-out episodes" in g["reason"]  # eval adds the hint


def test_verifier_errors_are_failures_in_every_rate_with_their_own_rate_beside() -> None:
    crashed = {"success": False, "verifier_error": True, "failure_reason": "verifier_error: E"}
    stats = [ep(0), ep(1, **crashed), ep(2, task="t1", **crashed), ep(3, task="t1")]
    m = compute_metrics(stats, k=2)
    assert m["episodes"] == 4 and m["verifier_errors"] == 2 and m["unscored"] == 0
    assert m["success"]["rate"] == 0.5 and m["verifier_error"]["rate"] == 0.5
    assert m["pass@k"]["1"] == 0.5 and m["pass^k"]["2"] == 0.0 and m["pass@k"]["2"] == 1.0
    assert m["by_family"][0]["verifier_error_rate"] == 0.5
    assert [r["verifier_errors"] for r in m["pass_rates"]] == [1, 1]
    assert [r["reason"] for r in failure_log_rows(stats)] == ["verifier_error: E"] * 2


def test_only_an_unscored_episode_is_left_out() -> None:
    unscored = ep(1, success=False, verifier_error=True, counted=False, steps=0)
    m = compute_metrics([ep(0), unscored])
    assert m["episodes"] == 1 and m["unscored"] == 1 and m["success"]["rate"] == 1.0
    assert m["verifier_errors"] == 0 and m["verifier_error"]["rate"] == 0.0


def test_failure_analysis_counts_reasons_and_facts() -> None:
    stats = [
        ep(0, success=False, failure_reason="no_change", verdict_facts={"missing": 1}),
        ep(1, success=False, failure_reason="no_change", verdict_facts={"missing": 1}),
        ep(2, success=False, failure_reason=None, truncated=True, terminated=False),
        ep(3),
    ]
    f = failure_analysis(stats)
    assert f["failed"] == 3
    assert [(r["reason"], r["count"]) for r in f["reasons"]] == [("no_change", 2), ("truncated", 1)]
    assert f["reasons"][0]["example"] == "e0" and f["facts"][0]["fact"] == "missing=1"
    rows = failure_log_rows(stats)
    assert [r["reason"] for r in rows] == ["no_change", "no_change", "truncated"]


def test_review_flags_short_toolless_and_unusual_successes() -> None:
    honest = [ep(i, task=f"t{i}") for i in range(40)]
    short = ep(100, steps=2, tool_calls=1, tools_used=("act",), per_tool={"act": (1, 0)})
    toolless = ep(101, steps=1, tool_calls=0, tools_used=(), per_tool={})
    weird = ep(102, tools_used=("act", "look", "sudo"), per_tool={"sudo": (1, 0)})
    failed_short = ep(103, success=False, steps=1)
    review = flag_for_review([*honest, short, toolless, weird, failed_short])
    flagged = {f["episode_id"]: " ".join(f["reasons"]) for f in review["episodes"]}
    assert set(flagged) == {"e100", "e101", "e102"}
    assert "fewer_steps_than_oracle" in flagged["e100"] and "unusually_few" in flagged["e100"]
    assert "unusual_tools" in flagged["e100"]  # a tool set no honest success used
    assert "no_tool_calls" in flagged["e101"]
    assert "sudo" in flagged["e102"]
    assert review["rules"]["fewer_steps_than_oracle"] == 2
    assert flag_for_review([ep(i) for i in range(10)])["flagged"] == 0


def test_stats_read_off_a_real_ledger_episode(tmp_path: Path) -> None:
    env = LedgerEnv()
    task_id = LedgerEnv.tasks.sample(1, 5, "train", difficulties=[2])[0]
    out = tmp_path / "run"
    source = PolicySource("oracle", resolve_policy("oracle").factory)
    asyncio.run(
        run(
            RunSpec(env="ledger", policy=source.spec, jobs=[(task_id, 0)], out=out),
            LocalExecutor(LedgerEnv, source.factory),
        )
    )
    (s,) = load_stats(out / "trajectories.jsonl", oracle_path_lengths(env))
    plan = env.oracle_plan(env.tasks.resolve(task_id))
    assert plan is not None and s.oracle_steps == len(plan)
    assert s.success and s.faults >= 1  # level 2 forces a timeout on list_accounts
    assert s.tool_errors >= 1 and s.per_tool["list_accounts"][1] >= 1
    assert s.error_kinds.get("timeout", 0) >= 1
    assert s.steps == s.oracle_steps + s.faults  # each fault costs one retry
    assert s.step_efficiency is not None and 0 < s.step_efficiency < 1
    assert s.verdict_facts["missing"] == 0 and s.replies == 1


class Cheater:
    """Reads the hidden moves off the environment and makes the transfers without looking
    anything up: success in fewer steps than the reference path. The screen must flag it."""

    name = checkpoint = "cheater"
    scripted = True  # it reads the hidden moves off the environment

    async def start(self, ctx: EpisodeContext) -> None:
        self.inner = SkilledPolicy(1.0)
        await self.inner.start(ctx)
        self.cheat = ctx.task_id.endswith(("1", "3"))
        self.env = scripted_env(ctx, "the cheater")
        self.moves: list[Any] | None = None

    async def act(self, observation: Any) -> PolicyTurn:
        if not self.cheat:
            return await self.inner.act(observation)
        if self.moves is None:
            self.moves = list(self.env.task.truth["moves"])  # type: ignore[attr-defined]
        if self.moves:
            m = self.moves.pop(0)
            args = {"from_account": m["from"], "to_account": m["to"], "amount_cents": m["amount"]}
            return PolicyTurn(ToolCall(name="transfer", arguments=args))
        return PolicyTurn(Reply(text="done"))


def test_the_screen_catches_a_policy_that_skips_the_lookups(tmp_path: Path) -> None:
    ids = LedgerEnv.tasks.sample(40, 11, "train")
    source = PolicySource("cheater", Cheater)
    asyncio.run(
        run(
            RunSpec(env="ledger", policy=source.spec, jobs=[(t, 0) for t in ids], out=tmp_path),
            LocalExecutor(LedgerEnv, source.factory),
        )
    )
    stats = job_stats(tmp_path, ids, 0, 1, oracle_path_lengths(LedgerEnv()))
    data = write_eval(tmp_path, EvalConfig("ledger", "cheater"), stats)
    cheats = {s.episode_id for s in stats if s.task_id.endswith(("1", "3"))}
    assert cheats and all(s.success for s in stats)
    flagged = {f["episode_id"] for f in data["review"]["episodes"]}
    assert flagged == cheats
    assert data["review"]["rules"]["fewer_steps_than_oracle"] == len(cheats)
