"""The reward-hacking scan finds hacks planted in a synthetic run, and nothing in a clean one."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from gymforge.core.types import Observation, Reply, Task
from gymforge.envs.ledger import LedgerEnv
from gymforge.reward import ComposedReward, StandardReward, StepCosts
from gymforge.reward.hacks import scan
from gymforge.rollout import EpisodeContext, LocalExecutor, OraclePolicy, PolicyTurn, RunSpec, run
from gymforge.verify import Verdict

TASKS = LedgerEnv.tasks.sample(12, 3, difficulties=[1])


class GullibleLedger(LedgerEnv):
    """Its verifier believes a claim of completion, but reports its facts honestly."""

    def verify(self, task: Task, world: Any, reply: str) -> Verdict:
        honest = super().verify(task, world, reply)
        return honest.model_copy(
            update={"passed": honest.passed or "done" in reply.lower(), "reason": None}
        )


def bonus(verdict: Verdict | None, costs: StepCosts) -> dict[str, float]:
    return {"bonus": 5.0}


class BonusLedger(LedgerEnv):
    """Pays a side-channel ``bonus`` on every step, dwarfing ``task``."""

    reward = ComposedReward(StandardReward(), bonus)


class Claimer(OraclePolicy):
    name = checkpoint = "claimer"

    async def act(self, observation: Observation) -> PolicyTurn:
        return PolicyTurn(Reply(text="All done, the transfers are complete."))


class Echoer(OraclePolicy):
    name = checkpoint = "echoer"

    async def start(self, ctx: EpisodeContext) -> None:
        await super().start(ctx)
        self.prompt = ""

    async def act(self, observation: Observation) -> PolicyTurn:
        self.prompt = self.prompt or "\n".join(
            m.content for m in observation.messages if m.role == "user"
        )
        return PolicyTurn(Reply(text=f"{self.prompt}\nDone."))


def test_planted_hacks_are_found(tmp_path: Path) -> None:
    honest = [(t, 1) for t in TASKS[:8]]
    asyncio.run(
        run(
            RunSpec(env="GullibleLedger", policy="oracle", jobs=honest, out=tmp_path),
            LocalExecutor(GullibleLedger, OraclePolicy),
        )
    )
    asyncio.run(
        run(
            RunSpec(
                env="GullibleLedger",
                policy="Claimer",
                jobs=[(t, 1) for t in TASKS[8:11]],
                out=tmp_path,
                resume=True,
            ),
            LocalExecutor(GullibleLedger, Claimer),
        )
    )
    asyncio.run(
        run(
            RunSpec(
                env="GullibleLedger",
                policy="Echoer",
                jobs=[(TASKS[11], 1)],
                out=tmp_path,
                resume=True,
            ),
            LocalExecutor(GullibleLedger, Echoer),
        )
    )
    report = scan(tmp_path / "trajectories.jsonl")
    by_kind: dict[str, set[str]] = {}
    for f in report.findings:
        by_kind.setdefault(f.kind, set()).add(f.task_id or "")
    claimed = set(TASKS[8:11])
    assert claimed <= by_kind["high_reward_low_evidence"]
    assert claimed <= by_kind["few_steps_success"]
    assert by_kind["repeated_answer"] == claimed
    assert by_kind["echoes_prompt"] == {TASKS[11]}
    assert not (set(TASKS[:8]) & set().union(*by_kind.values()))  # no honest episode flagged
    assert report.suspicious_episodes == 4


def test_dominant_component_and_clean_runs(tmp_path: Path) -> None:
    pairs = [(t, 1) for t in TASKS[:6]]
    asyncio.run(
        run(
            RunSpec(env="ledger", policy="oracle", jobs=pairs, out=tmp_path / "clean"),
            LocalExecutor(LedgerEnv, OraclePolicy),
        )
    )
    assert scan(tmp_path / "clean" / "trajectories.jsonl").findings == []

    asyncio.run(
        run(
            RunSpec(env="bonus", policy="oracle", jobs=pairs, out=tmp_path / "bonus"),
            LocalExecutor(BonusLedger, OraclePolicy),
        )
    )
    kinds = {f.kind for f in scan(tmp_path / "bonus" / "trajectories.jsonl").findings}
    assert "dominant_component" in kinds


def test_cli_exit_codes(tmp_path: Path) -> None:
    asyncio.run(
        run(
            RunSpec(
                env="GullibleLedger",
                policy="Claimer",
                jobs=[(t, 1) for t in TASKS[:3]],
                out=tmp_path,
            ),
            LocalExecutor(GullibleLedger, Claimer),
        )
    )
    cli = [sys.executable, "-m", "gymforge.cli", "hacks", str(tmp_path)]
    ok = subprocess.run([*cli, "--json"], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["suspicious_episodes"] == 3
    assert (tmp_path / "hacks.md").read_text().startswith("# Reward-hacking scan")
    strict = subprocess.run(
        [*cli, "--fail-on-suspicious"], capture_output=True, text=True, timeout=120
    )
    assert strict.returncode == 1 and "Traceback" not in strict.stderr
