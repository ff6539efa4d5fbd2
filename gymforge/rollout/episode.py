"""Run one episode and turn it into trajectory records (unsealed dicts)."""

from __future__ import annotations

import asyncio
import json
import math
import time
from typing import Any, cast

from gymforge.core.capabilities import TASK, supported
from gymforge.core.env import Environment, StepResult
from gymforge.core.errors import (
    EPISODE_TIMEOUT,
    TURN_TIMEOUT,
    InfraError,
    PolicyStopped,
    TurnTimedOut,
)
from gymforge.core.policy import (
    FinishingPolicy,
    Policy,
    PolicyTurn,
    StallJudgingPolicy,
    episode_context,
)
from gymforge.core.seeding import fingerprint
from gymforge.core.types import Action, Invalid, Message, Observation, Reply
from gymforge.rollout.capture import turn_record
from gymforge.rollout.failures import policy_failure
from gymforge.rollout.gcpace import paced_collections
from gymforge.trajectory.outcome import verifier_error_reason
from gymforge.trajectory.schema import EpisodeKeys, component_totals

CONTEXT_LENGTH = "context_length"
"""The failure reason of an episode the policy's context window cut short."""

MAX_STEPS_GUARD = 100_000
"""A hard stop for environments that never end an episode (a broken budget)."""

EMPTY_STATE_FINGERPRINT = fingerprint({})
"""``fingerprint({})``, computed once: single-turn environments (``math``) snapshot an empty
world at every reset and step."""


def state_fingerprint(state: object) -> str:
    """``fingerprint(state)``; an empty plain dict is answered from
    :data:`EMPTY_STATE_FINGERPRINT` (tests/rollout/test_rollout_fast_paths.py)."""
    if type(state) is dict and not state:
        return EMPTY_STATE_FINGERPRINT
    return fingerprint(state)


_PLAIN_TEXT = (Message, Reply, Invalid)
"""Frozen models of string (and None) fields only, with no serialisers: their dump, in
either mode, is their field values in field order."""


def message_record(m: Message) -> dict[str, Any]:
    """``m.model_dump()``: for a ``Message`` itself a copy of its field values
    (``tests/rollout/test_rollout_fast_paths.py`` holds the two equal)."""
    if type(m) in _PLAIN_TEXT:
        return dict(m.__dict__)
    return m.model_dump()


def action_record(action: Action) -> dict[str, Any]:
    """``action.model_dump(mode="json")``, a copy of the field values for a ``Reply`` or an
    ``Invalid`` (strings only); a ``ToolCall``'s arguments go through pydantic."""
    if type(action) in _PLAIN_TEXT:
        return dict(action.__dict__)
    return action.model_dump(mode="json")


def keys_record(keys: EpisodeKeys) -> dict[str, Any]:
    """``keys.model_dump()``: for an ``EpisodeKeys`` itself (scalar fields, no serialisers)
    a copy of its field values (``tests/rollout/test_rollout_fast_paths.py`` holds the two
    equal)."""
    if type(keys) is EpisodeKeys:
        return dict(keys.__dict__)
    return keys.model_dump()


def observation_record(obs: Observation) -> dict[str, Any]:
    tools = list(obs.tools)
    return {
        "rendered": [message_record(m) for m in obs.messages],
        "data": obs.data,
        "tools": tools,
        # key order survives only as text (records are canonical, sorted-key JSON)
        "tools_json": json.dumps(tools, ensure_ascii=False) if tools else None,
        "tokens": obs.tokens,
        "tokenizer": obs.tokenizer,
        "tokens_exact": obs.tokens_exact,
    }


def step_outcome(result: StepResult, state_fp: str) -> dict[str, Any]:
    """The deterministic fields of a step record: what replay compares."""
    info = dict(result.info)
    tool_result = info.pop("tool_result", None)
    return {
        "observation": observation_record(result.observation),
        "tool_result": tool_result,
        "reward": result.reward,
        "reward_components": result.reward_components,
        "terminated": result.terminated,
        "truncated": result.truncated,
        "info": info,
        "state_fingerprint": state_fp,
    }


def reset_outcome(obs: Observation, state_fp: str) -> dict[str, Any]:
    return {
        "observation": observation_record(obs),
        "tool_result": None,
        "reward": 0.0,
        "reward_components": {},
        "terminated": False,
        "truncated": False,
        "info": {},
        "state_fingerprint": state_fp,
    }


def reset_record(
    base: dict[str, Any], obs: Observation, state_fp: str, reset_ms: float
) -> dict[str, Any]:
    """Step 0's record: the reset, before any action."""
    return {
        **base,
        "record": "step",
        "step": 0,
        "action": None,
        "policy": None,
        **reset_outcome(obs, state_fp),
        "timing": {"reset_ms": reset_ms},
        "timestamp": time.time(),
    }


def step_record(
    base: dict[str, Any],
    step: int,
    action: Action,
    policy: dict[str, Any] | None,
    result: StepResult,
    state_fp: str,
    timing: dict[str, float],
) -> dict[str, Any]:
    """The record of step ``step``: the action, what the policy emitted, and the outcome."""
    return {
        **base,
        "record": "step",
        "step": step,
        "action": action_record(action),
        "policy": policy,
        **step_outcome(result, state_fp),
        "timing": timing,
        "timestamp": time.time(),
    }


async def run_episode(
    env: Environment, policy: Policy, keys: EpisodeKeys, timeout_s: float | None = None
) -> list[dict[str, Any]]:
    """Play one episode; return its step records and its closing episode record.

    A policy that raises is an infrastructure failure (``InfraError``, retried): the episode
    is not scored; one that raises a ``UserError`` (it cannot play this task: the oracle
    without a reference solution) raises it as it is, a mistake no retry fixes
    (``failures.policy_failure``). Anything the *agent* does wrong is handled inside
    ``env.step``. ``timeout_s`` is the episode's time budget: once the agent has acted (its
    first action reached ``env.step``), running past it ends the episode as a truncated,
    counted failure (``EPISODE_TIMEOUT``), like any other budget, since the agent's actions
    (commands that wait, slow turns) spend it. A model turn that ran past the policy's call
    timeout on every attempt (``TurnTimedOut``) is judged alike (``TURN_TIMEOUT``). Before
    the agent acted, either is a truncated, counted failure too when the server was seen
    generating while the turn waited (``TurnTimedOut.answering``; for the episode's time,
    the policy's ``server_answering``, a ``StallJudgingPolicy``: other turns answered during
    each attempt, or the same request for one token, ``gymforge.rollout.liveness``), so a
    single-turn task's only turn cannot be taken out of the count by answering at length;
    with nothing answered it is an ``InfraError`` (a stalled start, retried). While it runs,
    full garbage collections are paced (``gymforge.rollout.gcpace``).
    """
    with paced_collections():
        try:
            return await _play(env, policy, keys, timeout_s)
        finally:
            if finishes(policy):
                await cast(FinishingPolicy, policy).finish()


def finishes(policy: object) -> bool:
    """``isinstance(policy, FinishingPolicy)``, without the protocol's per-call walk of its
    members (about 25 us): a ``finish`` that is not None, or a class that is one
    (``issubclass``, which ``abc`` caches per class), exactly as the protocol check decides."""
    return getattr(policy, "finish", None) is not None or issubclass(type(policy), FinishingPolicy)


class _Played:
    """What an episode has recorded so far (read when its time budget ends it)."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.result: StepResult | None = None
        self.acted = False


async def _play(
    env: Environment, policy: Policy, keys: EpisodeKeys, timeout_s: float | None
) -> list[dict[str, Any]]:
    base = keys_record(keys)
    played = _Played()
    if timeout_s is None:  # no budget: no timer to arm
        stopped = await _steps(env, policy, keys, base, played)
    else:
        try:
            async with asyncio.timeout(timeout_s) as budget:
                stopped = await _steps(env, policy, keys, base, played)
        except TimeoutError:
            if not budget.expired():
                raise
            if not played.acted and not await _server_answering(policy):
                raise InfraError(f"episode exceeded its {timeout_s} s timeout") from None
            stopped = EPISODE_TIMEOUT
    records = played.records
    records.append(episode_record(base, records, played.result, env, stopped))
    return records


async def _server_answering(policy: Policy) -> bool:
    """Whether ``policy``'s server was seen generating while its turn in flight waited
    (``StallJudgingPolicy``); False for a policy that cannot tell."""
    return isinstance(policy, StallJudgingPolicy) and await policy.server_answering()


async def _steps(
    env: Environment, policy: Policy, keys: EpisodeKeys, base: dict[str, Any], played: _Played
) -> str | None:
    """Play into ``played``; the reason the policy stopped the episode early, if it did."""
    try:
        ctx = episode_context(
            policy,
            env,
            keys.task_id,
            keys.seed,
            sampling_seed=keys.sampling_seed or 0,
            rollout=keys.rollout,
        )
        await policy.start(ctx)
    except Exception as err:
        failure = policy_failure(policy.name, "failed to start", err)
        if failure is err:
            raise
        raise failure from err
    t0 = time.perf_counter()
    obs = await env.reset(keys.task_id, keys.seed)
    fp = state_fingerprint(await env.snapshot())
    records = played.records
    records.append(reset_record(base, obs, fp, (time.perf_counter() - t0) * 1e3))
    for step in range(1, MAX_STEPS_GUARD + 1):
        try:
            turn: PolicyTurn = await policy.act(obs)
        except PolicyStopped as stop:
            return stop.reason  # the policy's budget ended the episode: truncated
        except TurnTimedOut as err:
            if played.acted or err.answering:  # a turn too long to answer: the policy's output
                return TURN_TIMEOUT
            raise  # a stalled start (nothing answered while it waited): retried
        except Exception as err:
            failure = policy_failure(policy.name, "failed", err)
            if failure is err:
                raise
            raise failure from err
        t0 = time.perf_counter()
        played.acted = True
        result = await env.step(turn.action)
        fp = state_fingerprint(await env.snapshot())
        timing = {**result.timing, "step_ms": (time.perf_counter() - t0) * 1e3}
        records.append(step_record(base, step, turn.action, turn_record(turn), result, fp, timing))
        played.result = result
        obs = result.observation
        if result.terminated or result.truncated:
            return None
    raise InfraError(f"{keys.env_id} never ended episode {keys.episode_id}")


def episode_tokens(records: list[dict[str, Any]]) -> int:
    """Observation tokens plus the policy's completion tokens (when it captured them)."""
    total = 0
    for r in records:
        total += r["observation"]["tokens"]
        policy = r.get("policy") or {}
        for turn in policy.get("model_turns") or [policy]:
            ids = turn.get("completion_token_ids")
            total += len(ids) if ids else 0
    return total


def episode_record(
    base: dict[str, Any],
    records: list[dict[str, Any]],
    last: StepResult | None,
    env: Environment,
    stopped: str | None = None,
) -> dict[str, Any]:
    """The closing record. ``stopped`` is the reason when the policy ended the episode
    before the environment did (its context filled up, its harness exited): that budget end
    is a truncation with that failure reason. A verifier that raised is the failure reason
    ``verifier_error: <kind>`` (``trajectory.outcome``: a failed, counted episode)."""
    totals = component_totals([r["reward_components"] for r in records])
    reason: str | None
    if stopped is not None or last is None:
        terminated, truncated, success = False, True, False
        reason = stopped or CONTEXT_LENGTH
    else:
        terminated, truncated = last.terminated, last.truncated
        success = bool(last.info.get("success"))
        verdict = last.info.get("verdict") or {}
        reason = (
            None
            if success
            else verifier_error_reason(last.info)
            or verdict.get("reason")
            or last.info.get("end_reason")
        )
    current = supported(env, TASK)
    task = current.task if current is not None else None
    return {
        **base,
        "record": "episode",
        "steps": len(records) - 1,
        "family": task.family if task is not None else "",
        "difficulty": task.difficulty if task is not None else 0,
        "split": task.split if task is not None else "train",
        "reward": math.fsum(totals.values()),
        "reward_components": totals,
        "terminated": terminated,
        "truncated": truncated,
        "success": success,
        "failure_reason": reason,
        "tokens": episode_tokens(records),
        "timing": {},
        "timestamp": time.time(),
    }
