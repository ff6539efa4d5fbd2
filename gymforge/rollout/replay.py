"""Replay: re-run recorded episodes from ``(task_id, seed, actions)`` and compare.

For every episode the digest chain is verified first; then the environment is reset and each
recorded action is stepped again. Every step's observation, reward, reward components,
flags, ``info`` and state fingerprint must equal the record (an ``info`` a served environment
redacted, naming ``withheld`` keys, is compared with the replayed ``info`` redacted alike).
``timing``, ``timestamp`` and the ids are run-specific and ignored. The first divergence is
reported.

Each recorded action must also be what the recorded policy output parses to (field
``policy``): the turn's ``text`` and ``tool_calls`` go through the same parser the policy
used (``gymforge.rollout.parsing``, with text tool calls on or off), so the training data
(the policy output) cannot be rewritten without the actions, and so the replay, changing.
Turns that recorded no output (scripted policies, ``capture_level: none``) have nothing to
check. Token ids are not re-decoded (that needs the model's tokenizer): only a seal covers
them (``gymforge.trajectory.seal``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from gymforge.core.env import Environment
from gymforge.core.seeding import canonical_json, fingerprint
from gymforge.core.types import Action
from gymforge.rollout.episode import reset_outcome, step_outcome
from gymforge.rollout.parsing import parse_assistant_message
from gymforge.rollout.tool_formats import parse_completion
from gymforge.trajectory.io import EpisodeLog, read_episodes, verify_chain
from gymforge.trajectory.redact import WITHHELD, public_info

COMPARED = (
    "observation",
    "tool_result",
    "reward",
    "reward_components",
    "terminated",
    "truncated",
    "info",
    "state_fingerprint",
)
ACTION_ADAPTER: TypeAdapter[Action] = TypeAdapter(Action)


@dataclass(frozen=True)
class Divergence:
    episode_id: str
    task_id: str
    seed: int
    step: int
    field: str
    recorded: Any
    replayed: Any

    def describe(self) -> str:
        return (
            f"episode {self.episode_id} ({self.task_id}, seed {self.seed}) diverges at "
            f"step {self.step}, field {self.field!r}:\n  recorded: {_short(self.recorded)}\n"
            f"  replayed: {_short(self.replayed)}"
        )


@dataclass
class ReplayReport:
    episodes: int = 0
    steps: int = 0
    divergence: Divergence | None = None

    @property
    def ok(self) -> bool:
        return self.divergence is None


def _short(value: Any, limit: int = 300) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


# Observation fields added after records were first written, each derived from fields that
# are compared anyway: a record written before the field existed is compared without it.
DERIVED_OBSERVATION_FIELDS = ("tools_json",)


def _first_difference(recorded: dict[str, Any], replayed: dict[str, Any]) -> str | None:
    for name in COMPARED:
        ours = replayed.get(name)
        theirs = recorded.get(name)
        if name == "observation" and isinstance(theirs, dict) and isinstance(ours, dict):
            missing = [f for f in DERIVED_OBSERVATION_FIELDS if f not in theirs]
            ours = {k: v for k, v in ours.items() if k not in missing}
        redacted = name == "info" and isinstance(theirs, dict) and WITHHELD in theirs
        if redacted and isinstance(ours, dict):  # recorded through a server without --qa-hooks
            ours = public_info(ours, reveal=False)
        if theirs != ours:
            return name
    return None


def policy_parse(policy: dict[str, Any] | None, action: Any) -> dict[str, Any] | None:
    """What the recorded policy output parses to, when that is not the recorded ``action``
    (None when it is, or when the turn recorded no output to parse)."""
    if not policy or policy.get("capture_level") == "none":
        return None
    text, calls = policy.get("text"), policy.get("tool_calls")
    if text is None and not calls:
        return None
    call_id = (action.get("call_id") if isinstance(action, dict) else None) or "call_0"
    fmt = policy.get("tool_format")
    if fmt is not None:
        parsed = [parse_completion(text or "", fmt, call_id)]
    else:
        message = {"content": text, "tool_calls": calls}
        parsed = [
            parse_assistant_message(message, call_id, text_tool_calls=mode).action
            for mode in (True, False)
        ]
    dumped = [json.loads(canonical_json(p.model_dump(mode="json"))) for p in parsed]
    return None if action in dumped else dumped[0]


async def replay_episode(env: Environment, log: EpisodeLog) -> tuple[int, Divergence | None]:
    """Replay one verified episode on ``env``; return (steps replayed, first divergence)."""
    first = log.steps[0]
    if env.spec.version != first.env_version:
        return 0, Divergence(
            log.episode_id,
            first.task_id,
            first.seed,
            0,
            "env_version",
            first.env_version,
            env.spec.version,
        )
    obs = await env.reset(first.task_id, first.seed)
    replayed = reset_outcome(obs, fingerprint(await env.snapshot()))
    for i, raw in enumerate(log.raw[: len(log.steps)]):
        if i > 0:
            reparsed = policy_parse(raw.get("policy"), raw.get("action"))
            if reparsed is not None:
                return i, Divergence(
                    log.episode_id,
                    first.task_id,
                    first.seed,
                    i,
                    "policy",
                    raw.get("action"),
                    f"the recorded policy output parses to {reparsed!r}",
                )
            try:
                result = await env.step(ACTION_ADAPTER.validate_python(raw["action"]))
            except Exception as err:
                return i, Divergence(
                    log.episode_id,
                    first.task_id,
                    first.seed,
                    i,
                    "step",
                    "a step result",
                    f"{type(err).__name__}: {err}",
                )
            replayed = step_outcome(result, fingerprint(await env.snapshot()))
        replayed = json.loads(canonical_json(replayed))
        name = _first_difference(raw, replayed)
        if name is not None:
            return i, Divergence(
                log.episode_id,
                first.task_id,
                first.seed,
                i,
                name,
                raw.get(name),
                replayed.get(name),
            )
    return len(log.steps), None


async def replay_file(path: str | Path, env_factory: Callable[[str], Environment]) -> ReplayReport:
    """Verify and replay every episode of a trajectory file. ``env_factory(env_id)`` makes
    the environment. Integrity errors raise ``IntegrityError``; divergences are reported."""
    return await replay_episodes(read_episodes(path), env_factory)


async def replay_episodes(
    episodes: list[EpisodeLog], env_factory: Callable[[str], Environment]
) -> ReplayReport:
    """``replay_file`` for episodes already read."""
    report = ReplayReport()
    envs: dict[str, Environment] = {}
    try:
        for log in episodes:
            verify_chain(log)
            env_id = log.steps[0].env_id
            env = envs.get(env_id) or envs.setdefault(env_id, env_factory(env_id))
            steps, divergence = await replay_episode(env, log)
            report.episodes += 1
            report.steps += steps
            if divergence is not None:
                report.divergence = divergence
                break
    finally:
        for env in envs.values():
            await env.close()
    return report
