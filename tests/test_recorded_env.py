"""``recorded_env``: which environment names a file from elsewhere may resolve by itself.

The attack (a shared file naming ``evil.py:Class``) is
``tests/redteam/test_replay_env_from_file.py``."""

from __future__ import annotations

import pytest

from gymforge.core.errors import UserError
from gymforge.registry.resolve import recorded_env


@pytest.mark.parametrize("env", ["ledger", "math", "reasoning-gym:countdown"])
def test_built_in_ids_and_reasoning_gym_datasets_resolve_from_a_record(env: str) -> None:
    assert recorded_env(env, "f.jsonl") == env


@pytest.mark.parametrize(
    "env",
    [
        "evil.py:Evil",
        "/tmp/x/evil.py:Evil",
        "evil.py",
        "gymforge.envs.ledger:LedgerEnv",  # an import path, even into gymforge itself
        "os:system",
        "verifiers:some_module",
        "openenv:http://127.0.0.1:9",
        "ws://127.0.0.1:9",
        "reasoning-gym:../x",
        "reasoning-gym:",
        "no-such-env",
    ],
)
def test_anything_else_needs_env(env: str) -> None:
    with pytest.raises(UserError) as info:
        recorded_env(env, "shared.jsonl")
    message = str(info.value)
    assert "shared.jsonl" in message
    if ":" in env or env.endswith(".py"):
        assert f"--env {env}" in message
    else:  # an id alone names no code to import: say how to name the code
        assert "--env FILE.py:Class" in message and f"--env {env} " not in message
