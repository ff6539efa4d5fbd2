"""Any gymforge environment as a ``gymnasium.Env`` with text spaces.

Observations are the new chat messages rendered as ``role: content`` blocks (the reset
observation also lists the tool schemas), as printable ASCII: other characters are escaped
(``\\u00e9``), and text longer than ``max_length`` is cut with a marker. Actions are raw model
text, parsed exactly as a raw-completion model's output is: a ``<tool_call>{json}</tool_call>``
block is a tool call, anything else a reply, and unparseable output goes down the
environment's malformed-output path. ``reset(seed=...)`` draws a training task from the
environment's ``TaskSource`` with gymnasium's seeded RNG, or takes
``options={"task_id": ...}``. The step ``info`` carries the named reward components.

    env = gymforge.integrations.gymnasium.make("ledger")
    obs, info = env.reset(seed=0)
"""

from __future__ import annotations

import json
import string
from typing import Any

import gymnasium
from gymnasium import spaces

from gymforge.core.env import Environment, SyncEnvironment
from gymforge.core.errors import UserError
from gymforge.core.types import Observation
from gymforge.registry.handle import task_source
from gymforge.registry.resolve import make_env as make_gymforge_env
from gymforge.rollout.parsing import parse_text

CHARSET = frozenset(string.printable)
CUT = "\n[... cut]"


def to_ascii(text: str, max_length: int) -> str:
    safe = text.encode("ascii", "backslashreplace").decode("ascii")
    safe = "".join(c if c in CHARSET else f"\\x{ord(c):02x}" for c in safe)
    return safe if len(safe) <= max_length else safe[: max_length - len(CUT)] + CUT


class GymforgeTextEnv(gymnasium.Env[str, str]):
    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        env: Environment,
        *,
        split: str = "train",
        max_length: int = 65536,
        render_mode: str | None = None,
    ) -> None:
        tasks = task_source(env)
        if tasks is None:
            raise UserError(f"{env.spec.id} exposes no task source to draw tasks from")
        self._env = SyncEnvironment(env)
        self._tasks, self._split = tasks, split
        self.max_length = max_length
        self.render_mode = render_mode
        self.observation_space = spaces.Text(max_length=max_length, min_length=0, charset=CHARSET)
        self.action_space = spaces.Text(max_length=max_length, min_length=0, charset=CHARSET)
        self._last = ""

    def _render(self, obs: Observation) -> str:
        parts = [f"{m.role}: {m.content}" for m in obs.messages]
        if obs.tools:
            parts.append("tools: " + json.dumps([t["function"] for t in obs.tools]))
        self._last = to_ascii("\n\n".join(parts), self.max_length)
        return self._last

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        task_id = (options or {}).get("task_id")
        if task_id is None:
            draw = int(self.np_random.integers(2**31))
            task_id = self._tasks.sample(1, draw, self._split)[0]  # type: ignore[arg-type]
        episode_seed = int(self.np_random.integers(2**31))
        obs = self._env.reset(task_id, episode_seed)
        return self._render(obs), {"task_id": task_id, "seed": episode_seed, "tokens": obs.tokens}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        result = self._env.step(parse_text(action))
        info = {"reward_components": result.reward_components, **result.info}
        return (
            self._render(result.observation),
            result.reward,
            result.terminated,
            result.truncated,
            info,
        )

    def render(self) -> str | None:
        return self._last if self.render_mode == "ansi" else None

    def close(self) -> None:
        self._env.close()


def make(env_id: str, **options: Any) -> GymforgeTextEnv:
    """A built-in id or import path, wrapped; ``options`` go to ``GymforgeTextEnv``."""
    return GymforgeTextEnv(make_gymforge_env(env_id), **options)
