"""The work of OpenEnv's template echo environment, as a gymforge environment.

``openenv init``'s template echoes each action's message back with its length and a reward
of ``min(0.1 * length, 1.0)``, never ending an episode. ``EchoEnv`` does the same, so a
served comparison (``benchmarks/serve_load.py``) measures the two servers, not the two
environments: ``gymforge serve benchmarks/echo_env.py:EchoEnv``.
"""

from __future__ import annotations

from typing import Any

from gymforge.core.env import EnvSpec, StepResult
from gymforge.core.errors import EpisodeStateError
from gymforge.core.types import Action, Message, Observation, Reply


class EchoEnv:
    """Echoes a ``Reply``'s text; any other action echoes the empty string."""

    spec = EnvSpec("bench-echo", "1.0.0", description="echoes each reply (benchmark peer)")

    def __init__(self) -> None:
        self.steps = -1

    async def reset(self, task_id: str, seed: int) -> Observation:
        self.steps = 0
        text = "Echo environment ready!"
        return Observation(messages=(Message(role="user", content=text),))

    async def step(self, action: Action) -> StepResult:
        if self.steps < 0:
            raise EpisodeStateError("step before reset")
        self.steps += 1
        text = action.text if isinstance(action, Reply) else ""
        obs = Observation(
            messages=(Message(role="user", content=text),),
            data={"echoed_message": text, "message_length": len(text)},
        )
        return StepResult.make(
            obs, {"length": min(len(text) * 0.1, 1.0)}, info={"step": self.steps}
        )

    async def snapshot(self) -> dict[str, Any]:
        return {"steps": self.steps}

    async def close(self) -> None:
        self.steps = -1
