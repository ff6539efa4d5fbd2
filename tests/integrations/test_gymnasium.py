"""The Gymnasium adapter passes gymnasium's own environment checker on every built-in."""

from __future__ import annotations

import asyncio
import json

import pytest

gymnasium = pytest.importorskip("gymnasium")
from gymnasium.utils.env_checker import check_env  # noqa: E402

from gymforge.core.errors import InfraError, UserError  # noqa: E402
from gymforge.envs import BUILTIN  # noqa: E402
from gymforge.integrations.gymnasium import GymforgeTextEnv, make, to_ascii  # noqa: E402

BUDGETED = ["digits", "puzzles", "extract", "code"]


def made(env_id: str) -> GymforgeTextEnv:
    """The wrapped built-in, or a skip naming what it needs that this machine lacks."""
    try:
        return make(env_id)
    except (InfraError, UserError, ImportError, OSError) as err:  # a service or package
        pytest.skip(f"{env_id} cannot start here: {type(err).__name__}: {str(err)[:200]}")


@pytest.mark.parametrize("env_id", sorted(BUILTIN))
def test_every_builtin_passes_gymnasium_env_checker(env_id: str) -> None:
    env = made(env_id)
    try:
        check_env(env, skip_render_check=True)
    finally:
        env.close()


@pytest.mark.parametrize("env_id", [e for e in BUDGETED if e in BUILTIN])
def test_sampled_actions_fit_the_token_budget(env_id: str) -> None:
    """issue 36: ``digits`` sampled a 441-character action that overran its 64 tokens."""
    env = made(env_id)
    try:
        for seed in range(40):
            env.reset(seed=seed)
            env.action_space.seed(seed)
            action = env.action_space.sample()
            _, _, _, truncated, info = env.step(action)
            assert not (truncated and info.get("end_reason") == "max_tokens"), (seed, len(action))
    finally:
        env.close()


def test_the_action_space_shrinks_with_the_budget_left() -> None:
    env = make("digits")
    try:
        _, info = env.reset(seed=3)
        first = env.action_space
        assert isinstance(first, gymnasium.spaces.Text)
        assert first.max_length == (64 - info["tokens"]) * 4
    finally:
        env.close()


@pytest.mark.parametrize("env_id", ["ledger", "digits"])
def test_close_twice_is_harmless(env_id: str) -> None:
    env = make(env_id)
    env.reset(seed=0)
    env.close()
    env.close()


def test_reset_is_seeded_and_an_oracle_episode_succeeds() -> None:
    env = make("ledger")
    obs_a, info_a = env.reset(seed=7)
    obs_b, info_b = env.reset(seed=7)
    assert (obs_a, info_a) == (obs_b, info_b) and "tools:" in obs_a
    inner = env.unwrapped._env.env
    total, done = 0.0, False
    while not done:
        action = asyncio.run(inner.oracle_action())
        text = (
            f'<tool_call>{{"name": "{action.name}", "arguments": '
            f"{json.dumps(action.arguments)}}}</tool_call>"
            if action.kind == "tool_call"
            else action.text
        )
        obs, reward, terminated, truncated, info = env.step(text)
        total += reward
        done = terminated or truncated
        assert env.observation_space.contains(obs)
    assert terminated and info["success"] and info["reward_components"]["task"] == 1.0
    env.close()


def test_malformed_text_actions_take_the_malformed_path() -> None:
    env = make("ledger")
    env.reset(seed=1)
    _, _, terminated, truncated, info = env.step("<tool_call>{broken</tool_call>")
    assert "malformed" in info and not (terminated or truncated)
    env.close()


def test_ascii_rendering_escapes_and_cuts() -> None:
    assert to_ascii("café\u202e", 100) == "caf\\xe9\\u202e"
    cut = to_ascii("x" * 50, 20)
    assert len(cut) == 20 and cut.endswith("[... cut]")
