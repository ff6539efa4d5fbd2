"""One Verifiers episode, driven turn by turn the way Verifiers' own rollout loop drives it.

``MultiTurnEnv.rollout`` (Verifiers 0.3.1) asks a model client for each turn. gymforge's
policy is the model here, so this class runs the same steps around it, in the same order:
``init_state`` and ``setup_state``; per turn ``get_prompt_messages`` (which calls the
environment's ``env_response`` after the first turn), the completion recorded as a trajectory
step, and the stop conditions (``is_completed``); at the end ``cleanup`` (which renders the
completion) and the rubric's ``score_rollout``. Nothing here re-implements the environment.

The rubric runs in the sandbox (``sandboxed.py``), on the state as plain data: its reward
functions may evaluate the completion, which must never happen in gymforge. Only
``score_trusted`` (the oracle probe, on the dataset's own answers) runs it in this process.

A multi-turn environment's ``max_turns`` is a budget, which Verifiers reports as an ordinary
stop; gymforge truncates at the same turn instead (``Budget.max_steps``), so ``reached_cap``
tells the adapter not to verify. A single-turn environment's one turn is its definition, not
a budget.
"""

from __future__ import annotations

from typing import Any, Literal

import verifiers.legacy as vf
from verifiers.legacy.types import TrajectoryStep

from gymforge.core.types import Message
from gymforge.core.verdict import Verdict
from gymforge.envs.verifiers_adapter.sandboxed import score_in_sandbox

VF_VERSION = vf.__version__

CAP_STOP = "max_turns_reached"


def content_text(message: Any) -> str:
    """A Verifiers message's content as text (multi-part content joined)."""
    content = message.get("content") if isinstance(message, dict) else message.content
    if isinstance(content, list):
        parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in content]
        return "".join(parts)
    return "" if content is None else str(content)


def role_of(message: Any) -> str:
    role = message.get("role") if isinstance(message, dict) else message.role
    return str(role)


ROLES: dict[str, Literal["system", "user", "assistant", "tool"]] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
    "tool": "tool",
}


def to_messages(messages: list[Any]) -> list[Message]:
    """Verifiers messages as gymforge messages (a role gymforge lacks reads as ``user``)."""
    return [Message(role=ROLES.get(role_of(m), "user"), content=content_text(m)) for m in messages]


class VfEpisode:
    """The Verifiers state of one episode of ``env`` (loaded from ``module``) on a dataset
    row."""

    def __init__(self, env: vf.Environment, module: str, state: Any) -> None:
        self.env = env
        self.module = module
        self.state = state
        self.prompt: list[Any] = []
        self.reached_cap = False
        self.cleaned = False

    @classmethod
    async def start(cls, env: vf.Environment, module: str, row: dict[str, Any]) -> VfEpisode:
        state = await env.init_state(row, client=vf.ClientConfig(), model="gymforge")
        episode = cls(env, module, state)
        try:
            found = await env.setup_state(state)
            if found is not None:
                episode.state = found
        except vf.Error as err:
            episode.state["error"] = err
        episode.prompt = list(await env.get_prompt_messages(episode.state))
        return episode

    @property
    def multi_turn(self) -> bool:
        return not isinstance(self.env, vf.SingleTurnEnv)

    async def reply(self, text: str) -> list[Message] | None:
        """Record ``text`` as the model's turn; the environment's answer, or None when a stop
        condition ended the episode."""
        completion = [vf.AssistantMessage(content=text)]
        step = TrajectoryStep(
            prompt=self.prompt,
            completion=completion,
            response=None,
            tokens=None,
            reward=None,
            advantage=None,
            is_truncated=False,
            trajectory_id=self.state["trajectory_id"],
            extras={},
        )
        await self.env.add_trajectory_step(self.state, step)
        if await self.env.is_completed(self.state):
            return self._stopped()
        try:
            prompt = list(await self.env.get_prompt_messages(self.state))
        except vf.Error as err:
            self.state["error"] = err
            prompt = self.prompt
        if self.state.get("final_env_response") is not None or await self.env.is_completed(
            self.state
        ):
            return self._stopped()
        new = prompt[len(self.prompt) + len(completion) :]
        self.prompt = prompt
        return to_messages(new)

    def _stopped(self) -> list[Message] | None:
        if self.multi_turn and self.state.get("stop_condition") == CAP_STOP:
            self.reached_cap = True
            return []  # gymforge's step budget ends it, as a truncation
        return None

    def turns(self) -> list[dict[str, Any]]:
        """The episode so far as JSON: each turn's completion and its step reward."""
        return [
            {
                "completion": [content_text(m) for m in step["completion"]],
                "reward": step.get("reward"),
            }
            for step in self.state["trajectory"]
        ]

    async def cleanup(self) -> None:
        """Verifiers' end-of-rollout cleanup (it renders the completion and frees what the
        environment holds, a ``GymEnv``'s gym environment say), once."""
        if not self.cleaned:
            self.cleaned = True
            await self.env.cleanup(self.state)

    async def score(self) -> Verdict:
        """Clean up as Verifiers does after a rollout, then the rubric's verdict, computed in
        the sandbox (``ScorerError`` when the rubric does not return one)."""
        await self.cleanup()
        reward, metrics, facts = await score_in_sandbox(self.module, self.state)
        self.state["reward"], self.state["metrics"] = reward, metrics
        return verdict_of(self.env, self.state, facts)

    async def score_trusted(self) -> Verdict:
        """The rubric's verdict in this process: only for text the environment supplied
        itself (the oracle probe's formatted dataset answers), never a policy's."""
        await self.cleanup()
        await self.env.rubric.score_rollout(self.state)
        await self.env.rubric.cleanup(self.state)
        return verdict_of(self.env, self.state)


def verdict_of(env: vf.Environment, state: Any, output: dict[str, Any] | None = None) -> Verdict:
    """The rubric's scores in ``state`` as a gymforge verdict: passed at ``pass_threshold``;
    ``weighted`` holds each reward function's contribution to the reward."""
    reward = float(state["reward"] or 0.0)
    metrics = {k: float(v) for k, v in (state["metrics"] or {}).items()}
    names, weights = env.rubric._get_reward_func_names(), env.rubric._get_reward_weights()
    weighted = {
        k: w * metrics[k] for k, w in zip(names, weights, strict=True) if w and k in metrics
    }
    passed = reward >= env.pass_threshold
    error = state.get("error")
    facts: dict[str, Any] = {"reward": reward, "metrics": metrics, "weighted": weighted}
    if error is not None:
        facts["error"] = f"{type(error).__name__}: {str(error)[:200]}"
    if state.get("stop_condition"):
        facts["stop_condition"] = str(state["stop_condition"])
    facts.update(output or {})  # the rubric's captured output, bounded
    return Verdict(
        passed=passed,
        reason=None if passed else "below_pass_threshold",
        facts=facts,
        verifier=f"verifiers:{type(env).__name__}@{VF_VERSION}",
    )
