"""Helpers of the log-forgery attacks: real runs through the CLI, and the forger's tools.

The forger knows the file format and the public digest formula (``chain_digest``) but not
the seal key. After editing a file it recomputes every episode's digest chain, as the red
team did, and either keeps the stale seals or strips them (hoping the keyless check takes
over)."""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from gymforge.cli import app
from gymforge.core import canonical_json
from gymforge.core.types import Observation
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout import EpisodeContext, LocalExecutor, OraclePolicy, PolicyTurn, RunSpec, run
from gymforge.rollout.parsing import parse_text
from gymforge.trajectory.schema import chain_digest

KEY_ENV = "GYMFORGE_SEAL_KEY"
KEY = "red-team seal key: not the forger's"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


class Result:
    def __init__(self, code: int, stderr: str) -> None:
        self.code, self.stderr = code, stderr


def cli(*args: str | Path, key: str | None = None) -> Result:
    """Run the CLI in-process with ``GYMFORGE_SEAL_KEY`` set to ``key`` (unset when None)."""
    env = {"FORCE_COLOR": None, "NO_COLOR": "1", KEY_ENV: key}
    out = CliRunner(env=env).invoke(app, [str(a) for a in args])
    return Result(out.exit_code, ANSI.sub("", out.stderr))


def ledger_run(out: Path, policy: str, n: int = 4, seed: int = 0, key: str | None = KEY) -> Path:
    """``gymforge run ledger`` (sealed with ``key``); returns the trajectory file."""
    done = cli("run", "ledger", "--policy", policy, "-n", str(n), "--seed", str(seed),
               "--out", out, key=key)  # fmt: skip
    assert done.code == 0, done.stderr
    return out / "trajectories.jsonl"


def read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def forge(records: list[dict[str, Any]], path: Path, *, strip_seals: bool) -> None:
    """Recompute every episode's digest chain and write ``records`` to ``path``. With
    ``strip_seals`` every seal field and run-seal line goes, leaving a plain unkeyed file."""
    if strip_seals:
        records = [r for r in records if r.get("record") in ("step", "episode")]
        for r in records:
            r.pop("seal", None)
    previous: dict[str, str] = {}
    for r in records:
        if r.get("record") not in ("step", "episode"):
            continue
        episode = r["episode_id"]
        r["digest"] = previous[episode] = chain_digest(previous.get(episode, ""), r)
    path.write_text("".join(canonical_json(r) + "\n" for r in records))


def named_file(root: Path, suffix: str) -> Path:
    """An unsealed two-episode ledger run whose first episode's id has ``suffix`` appended
    (the digest chain no longer holds, so every reader fails on it, naming the episode)."""
    records = read(ledger_run(root / "run", "oracle", n=2, key=None))
    first = records[0]["episode_id"]
    for r in records:
        if r.get("episode_id") == first:
            r["episode_id"] = first + suffix
    path = root / "forged.jsonl"
    path.write_text("".join(canonical_json(r) + "\n" for r in records))
    return path


def success_rate(records: list[dict[str, Any]]) -> float:
    ends = [r for r in records if r.get("record") == "episode"]
    return sum(bool(r["success"]) for r in ends) / len(ends)


class TextOracle:
    """The oracle's actions as a text-completion model would emit them: the policy record
    carries the text, and the action is what that text parses to."""

    name = checkpoint = "text-oracle"
    scripted = True

    def __init__(self) -> None:
        self.inner = OraclePolicy()
        self.turns = 0

    async def start(self, ctx: EpisodeContext) -> None:
        await self.inner.start(ctx)

    async def act(self, observation: Observation) -> PolicyTurn:
        action = (await self.inner.act(observation)).action
        call = action.model_dump(mode="json")
        text = (
            "I will call the tool.\n<tool_call>"
            + json.dumps({"name": call["name"], "arguments": call["arguments"]})
            + "</tool_call>"
            if call.get("kind") == "tool_call"
            else call.get("text", "")
        )
        self.turns += 1
        return PolicyTurn(parse_text(text, call.get("call_id") or "call_0"), "text", text=text)


def text_oracle_run(out: Path, key: str | None = KEY, n: int = 3) -> Path:
    """A sealed run of :class:`TextOracle` on ledger (in-process, like ``gymforge run``)."""
    jobs = [(t, i) for i, t in enumerate(LedgerEnv.tasks.sample(n, 5, "train"))]
    saved = os.environ.pop(KEY_ENV, None)
    try:
        if key:
            os.environ[KEY_ENV] = key  # the runner seals with the key the environment holds
        asyncio.run(
            run(
                RunSpec(env="ledger", policy="TextOracle", jobs=jobs, out=out),
                LocalExecutor(LedgerEnv, TextOracle),
            )
        )
    finally:
        os.environ.pop(KEY_ENV, None)
        if saved is not None:
            os.environ[KEY_ENV] = saved
    return out / "trajectories.jsonl"
