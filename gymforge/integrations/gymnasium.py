"""Any gymforge environment as a ``gymnasium.Env`` with text spaces.

Observations are the new chat messages rendered as ``role: content`` blocks (the reset
observation also lists the tool schemas), as printable ASCII: other characters are escaped
(``\\u00e9``), and text longer than ``max_length`` is cut with a marker. Actions are raw model
text, parsed exactly as a raw-completion model's output is: a ``<tool_call>{json}</tool_call>``
block is a tool call, anything else a reply, and unparseable output goes down the
environment's malformed-output path. ``reset(seed=...)`` draws a training task from the
environment's ``TaskSource`` with gymnasium's seeded RNG, or takes
``options={"task_id": ...}``. The step ``info`` carries the named reward components.

The action space follows the environment's token budget: after every reset and step its
``max_length`` is the number of characters that still fit the episode's remaining
``Budget.max_tokens`` (as the environment counts them: four per token under the default
``approx:utf8/4`` count, one under an exact tokenizer), so a sampled action is never cut
off by the budget (``gymnasium.utils.env_checker.check_env`` passes on every built-in).
Environments without a token budget keep ``max_length``. ``close()`` may be called again.

    env = gymforge.integrations.gymnasium.make("ledger")
    obs, info = env.reset(seed=0)
"""

from __future__ import annotations

import json
import string
from typing import Any

import gymnasium
from gymnasium import spaces

from gymforge.core.capabilities import BUDGET, supported
from gymforge.core.env import Environment, SyncEnvironment
from gymforge.core.errors import UserError
from gymforge.core.tokens import ApproxTokenCounter
from gymforge.core.types import Observation
from gymforge.kit.tool_env import action_text
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
        self._closed = False
        has_budget = supported(env, BUDGET)
        self._token_limit = has_budget.budget.max_tokens if has_budget is not None else None
        counter = getattr(env, "token_counter", None)
        self._chars_per_token = 4 if isinstance(counter, ApproxTokenCounter | None) else 1
        self._used = 0
        self._action_length = max_length

    def _fit_actions(self, used: int) -> None:
        """Bound the action space by the characters the remaining token budget holds."""
        self._used = used
        if self._token_limit is None:
            return
        room = max(0, self._token_limit - used) * self._chars_per_token
        length = min(room, self.max_length)
        if length != self._action_length:
            self._action_length = length
            self.action_space = spaces.Text(max_length=length, min_length=0, charset=CHARSET)

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
        self._fit_actions(obs.tokens)
        return self._render(obs), {"task_id": task_id, "seed": episode_seed, "tokens": obs.tokens}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        parsed = parse_text(action)
        result = self._env.step(parsed)
        action_tokens = result.observation.tokens + self._count(action_text(parsed))
        self._fit_actions(self._used + action_tokens)
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

    def _count(self, text: str) -> int:
        counter = getattr(self._env.env, "token_counter", None)
        counted = counter.count_text(text) if counter is not None else None
        return counted if isinstance(counted, int) else ApproxTokenCounter().count_text(text)

    def close(self) -> None:
        """Close the environment; a second call does nothing."""
        if self._closed:
            return
        self._closed = True
        self._env.close()


def make(env_id: str, **options: Any) -> GymforgeTextEnv:
    """A built-in id or import path, wrapped; ``options`` go to ``GymforgeTextEnv``."""
    return GymforgeTextEnv(make_gymforge_env(env_id), **options)
