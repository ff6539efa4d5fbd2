"""A policy that plays back the actions of a recorded run, episode by episode.

``gymforge reproduce`` uses it for runs whose policy was a model: the environment is re-run
on the recorded actions, so any change in the environment shows as a difference.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import TypeAdapter

from gymforge.core.errors import InfraError, UserError
from gymforge.core.policy import EpisodeContext, Policy, PolicyTurn
from gymforge.core.types import Action, Observation
from gymforge.trajectory.io import read_episodes, verify_chain

_ACTION: TypeAdapter[Action] = TypeAdapter(Action)
Key = tuple[str, int, int]


def recorded_policy(path: str | Path) -> Callable[[], Policy]:
    """A factory of policies replaying ``path``'s actions for each (task, seed, rollout)."""
    book: dict[Key, list[Action]] = {}
    checkpoint = "recorded"
    for log in read_episodes(path):
        verify_chain(log)
        first = log.steps[0]
        checkpoint = f"recorded:{first.policy_checkpoint}"
        book[(first.task_id, first.seed, first.rollout)] = [
            _ACTION.validate_python(s.action.model_dump()) for s in log.steps[1:] if s.action
        ]

    class Recorded:
        name = "recorded"

        def __init__(self) -> None:
            self.checkpoint = checkpoint
            self.actions: list[Action] = []

        async def start(self, ctx: EpisodeContext) -> None:
            key = (ctx.task_id, ctx.seed, ctx.rollout)
            if key not in book:  # every attempt would miss it: a mistake, never retried
                raise UserError(
                    f"recorded:{path} holds no episode for task {ctx.task_id} seed {ctx.seed} "
                    f"rollout {ctx.rollout} (it holds {_holds(book)}): play back a run of "
                    "the same tasks, seed and rollouts"
                )
            self.actions = list(book[key])

        async def act(self, observation: Observation) -> PolicyTurn:
            if not self.actions:
                raise InfraError(
                    "the recorded episode ran out of actions: the environment "
                    "no longer ends where it did"
                )
            return PolicyTurn(self.actions.pop(0), capture_level="none")

    return Recorded


def _holds(book: dict[Key, list[Action]]) -> str:
    """What a recorded file holds, in a few words (for the error of a key it lacks)."""
    if not book:
        return "no finished episode"
    tasks = sorted({task for task, _, _ in book})
    shown = ", ".join(tasks[:3]) + (f" and {len(tasks) - 3} more" if len(tasks) > 3 else "")
    n = len(book)
    return f"{n} episode{'s' if n != 1 else ''} of task{'s' if len(tasks) != 1 else ''} {shown}"
