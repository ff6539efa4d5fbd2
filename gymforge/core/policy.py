"""The policy side of an episode: what a policy is given and what one turn records."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from typing import Literal, Protocol, cast, runtime_checkable

from gymforge.core.built import dataclass_made
from gymforge.core.capabilities import BUDGET, supported
from gymforge.core.env import Environment
from gymforge.core.errors import UserError
from gymforge.core.tokens import TokenCounter
from gymforge.core.types import Action, Observation

CaptureLevel = Literal["tokens", "logprobs", "text", "none"]
"""How much of a turn was captured. ``tokens``: both the prompt and the completion token ids
exactly as the server returned them (logprobs too when served); ``logprobs``: per-token
logprobs without both id lists; ``text``: text only (not trainable); ``none``: scripted."""


@dataclass(frozen=True)
class EpisodeContext:
    """What every policy learns at the start of an episode: public facts, never the
    environment (which holds the hidden truth), so a model policy has no path to it.

    ``sampling_seed`` differs between the rollouts of one group (same task, same environment
    seed) and seeds the model's sampling. ``max_tokens`` is the environment's declared token
    budget (``Budget.max_tokens``) and ``token_counter`` the counter it measures with (None:
    it declares none). Build it with :func:`episode_context`, which reads these off the
    environment and gives a scripted policy its :class:`ScriptedContext` instead.
    """

    task_id: str
    seed: int
    _: KW_ONLY
    sampling_seed: int = 0
    rollout: int = 0
    max_tokens: int | None = None
    token_counter: TokenCounter | None = None


@dataclass(frozen=True)
class ScriptedContext(EpisodeContext):
    """The context of a scripted policy (``scripted = True``: the oracle, the scripted
    baselines, red-team attacks): the public facts plus the environment itself, for its
    oracle, plan, current task and toolset. Only :func:`episode_context` builds one, and
    only for a policy that declares itself scripted."""

    env: Environment = field(kw_only=True)


def is_scripted(policy: object) -> bool:
    """Whether ``policy`` plays from the hidden truth and says so with the class or instance
    attribute ``scripted = True`` (exactly True). A model policy, a harness or anything
    trained never declares it."""
    return getattr(policy, "scripted", False) is True


def episode_context(
    policy: object,
    env: Environment,
    task_id: str,
    seed: int,
    *,
    sampling_seed: int = 0,
    rollout: int = 0,
) -> EpisodeContext:
    """The context to start ``policy`` with for episode ``(task_id, seed)`` of ``env``: a
    :class:`ScriptedContext` (with ``env``) when the policy is scripted, else the public
    :class:`EpisodeContext`. Every runner builds contexts here and nowhere else."""
    has_budget = supported(env, BUDGET)
    max_tokens = has_budget.budget.max_tokens if has_budget is not None else None
    found = getattr(env, "token_counter", None)
    counter = cast(TokenCounter, found) if hasattr(found, "count_text") else None
    if is_scripted(policy):
        return ScriptedContext(
            task_id,
            seed,
            sampling_seed=sampling_seed,
            rollout=rollout,
            max_tokens=max_tokens,
            token_counter=counter,
            env=env,
        )
    made = {
        "task_id": task_id,
        "seed": seed,
        "sampling_seed": sampling_seed,
        "rollout": rollout,
        "max_tokens": max_tokens,
        "token_counter": counter,
    }
    return dataclass_made(EpisodeContext, made)  # as its __init__ makes it (test_dataclass_made)


def scripted_env(ctx: EpisodeContext, who: str) -> Environment:
    """The environment in a scripted policy's context. ``who`` names the policy for the
    ``UserError`` raised when the context is a public one (the policy was started without
    :func:`episode_context`, or does not declare ``scripted = True``)."""
    if isinstance(ctx, ScriptedContext):
        return ctx.env
    raise UserError(
        f"{who} plays from the environment's hidden truth and was given a public "
        "EpisodeContext: declare scripted = True and start it through episode_context()"
    )


@dataclass(frozen=True)
class PolicyTurn:
    """One policy turn: the action, how much of the model's output was captured, and the
    text it was parsed from (a policy that speaks: a simulated user, a judge). What an
    inference server returned beyond that (token ids, logprobs, the model) is the rollout
    layer's ``gymforge.rollout.capture.CapturedTurn``."""

    action: Action
    capture_level: CaptureLevel = "none"
    text: str | None = None


class Policy(Protocol):
    """A policy acts on observations. ``checkpoint`` is stamped on every trajectory record."""

    name: str
    checkpoint: str

    async def start(self, ctx: EpisodeContext) -> None: ...

    async def act(self, observation: Observation) -> PolicyTurn: ...


@runtime_checkable
class FinishingPolicy(Protocol):
    """A policy with something to release when an episode ends, however it ends (the
    environment ended it, the run timed it out or gave up on it): an outside harness's
    process, its pending tool call. The runner awaits ``finish`` once per started
    episode; it must be quick and must not raise."""

    async def finish(self) -> None: ...


@runtime_checkable
class StallJudgingPolicy(Protocol):
    """A policy that can tell whether its model server was generating while its turn in
    flight waited (``gymforge.rollout.liveness``). When an episode's time runs out before
    the agent acted, the runner asks: yes, and the turn's own length spent the time, the
    episode's counted failure (``EPISODE_TIMEOUT``); no, and it was a stalled start,
    retried. Awaited at most once per episode, after the turn was cancelled; it may send
    the server a request bounded by the policy's call timeout, and must not raise."""

    async def server_answering(self) -> bool: ...
