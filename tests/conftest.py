"""Shared fixtures: ledger environments behind the sync facade, and an oracle driver."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterator

import pytest

from gymforge.core import StepResult, SyncEnvironment
from gymforge.envs.ledger import LedgerEnv

# tests/engine needs a real vLLM server: only `make test-engine` (GYMFORGE_ENGINE=1) runs it
collect_ignore = [] if os.environ.get("GYMFORGE_ENGINE") == "1" else ["engine"]


@pytest.fixture(autouse=True, scope="session")
def _no_ambient_seal_key() -> Iterator[None]:
    """A developer's $GYMFORGE_SEAL_KEY must not seal (or refuse) the tests' files, module
    fixtures' included (hence session scope)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("GYMFORGE_SEAL_KEY", raising=False)
        yield


@pytest.fixture
def make_sync() -> Iterator[Callable[..., SyncEnvironment]]:
    """``make_sync(EnvClass=LedgerEnv, **kwargs)``: a SyncEnvironment closed at teardown."""
    made: list[SyncEnvironment] = []

    def make(env_cls: type = LedgerEnv, **kwargs: object) -> SyncEnvironment:
        env = SyncEnvironment(env_cls(**kwargs))
        made.append(env)
        return env

    yield make
    for env in made:
        env.close()


@pytest.fixture
def play_oracle() -> Callable[[SyncEnvironment, str, int], list[StepResult]]:
    """Reset ``env`` on ``(task_id, seed)`` and follow the oracle until the episode ends."""

    def play(env: SyncEnvironment, task_id: str, seed: int) -> list[StepResult]:
        env.reset(task_id, seed)
        results: list[StepResult] = []
        while not results or not results[-1].done:
            action = asyncio.run(env.env.oracle_action())
            results.append(env.step(action))
            assert len(results) <= 100, "oracle never ended the episode"
        return results

    return play
