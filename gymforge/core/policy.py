"""The policy side of an episode: what a policy is given and what one turn records."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from gymforge.core.env import Environment
from gymforge.core.types import Action, Observation

CaptureLevel = Literal["tokens", "logprobs", "text", "none"]
"""How much of a turn was captured. ``tokens``: both the prompt and the completion token ids
exactly as the server returned them (logprobs too when served); ``logprobs``: per-token
logprobs without both id lists; ``text``: text only (not trainable); ``none``: scripted."""


@dataclass(frozen=True)
class EpisodeContext:
    """What a policy learns at the start of an episode.

    ``env`` is given so that scripted baselines (the oracle) can ask for the reference path;
    model policies must not read it. ``sampling_seed`` differs between the rollouts of one
    group (same task, same environment seed) and seeds the model's sampling.
    """

    task_id: str
    seed: int
    env: Environment
    sampling_seed: int = 0
    rollout: int = 0


@dataclass(frozen=True)
class PolicyTurn:
    """One policy turn: the action plus whatever the inference server returned, verbatim."""

    action: Action
    capture_level: CaptureLevel = "none"
    text: str | None = None
    tool_calls: list[Any] | None = None
    tool_format: str | None = None  # how ``text`` was parsed into ``action`` (token-in policies)
    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    finish_reason: str | None = None
    model: str | None = None
    weight_version: str | None = None
    model_turns: list[dict[str, Any]] | None = None
    """Every model request behind this action when the policy is an outside harness that
    made its own requests (through ``gymforge proxy``): each with its ``branch`` and exact
    ids. The top-level id fields are then None and exports read these instead."""

    def record(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "action"}
        if out["model_turns"] is None:
            del out["model_turns"]  # records of every other policy stay as they were
        return out


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
