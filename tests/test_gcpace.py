"""Garbage-collector pacing while episodes are in flight (``gymforge.rollout.gcpace``)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator

import pytest

from gymforge.core.types import Observation
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout import LocalExecutor, OraclePolicy, PolicyTurn, RunSpec, run
from gymforge.rollout.gcpace import (
    FULL_COLLECTION_EVERY,
    YOUNG_COLLECTION_EVERY,
    paced,
    paced_collections,
)

DEFAULT = (700, 10, 10)
PACED = (YOUNG_COLLECTION_EVERY, 10, FULL_COLLECTION_EVERY)


@pytest.fixture(autouse=True)
def default_thresholds() -> Iterator[None]:
    saved = gc.get_threshold()
    gc.set_threshold(*DEFAULT)
    yield
    gc.set_threshold(*saved)


def test_full_collections_paced_while_held_and_restored_after() -> None:
    with paced_collections():
        assert gc.get_threshold() == PACED
        with paced_collections():  # a second episode in flight
            assert gc.get_threshold() == PACED
        assert gc.get_threshold() == PACED  # one still in flight
    assert gc.get_threshold() == DEFAULT


def test_restored_after_an_exception() -> None:
    with pytest.raises(RuntimeError), paced_collections():
        raise RuntimeError("episode failed")
    assert gc.get_threshold() == DEFAULT


@pytest.mark.parametrize("thresholds", [(0, 10, 10), (0, 10, 10**6), (10**5, 10, 10**6)])
def test_disabled_or_laxer_collector_left_alone(thresholds: tuple[int, int, int]) -> None:
    gc.set_threshold(*thresholds)
    with paced_collections():
        assert gc.get_threshold() == thresholds
    assert gc.get_threshold() == thresholds


@pytest.mark.parametrize(
    ("before", "during"),
    [
        ((700, 10, 10**6), (YOUNG_COLLECTION_EVERY, 10, 10**6)),  # only the young one raised
        ((10**5, 10, 10), (10**5, 10, FULL_COLLECTION_EVERY)),  # only the oldest one raised
        ((1, 1, 1), (YOUNG_COLLECTION_EVERY, 1, FULL_COLLECTION_EVERY)),
    ],
)
def test_each_threshold_raised_to_at_least_the_paced_one(
    before: tuple[int, int, int], during: tuple[int, int, int]
) -> None:
    assert paced(before) == during
    gc.set_threshold(*before)
    with paced_collections():
        assert gc.get_threshold() == during
    assert gc.get_threshold() == before


def test_thresholds_changed_meanwhile_are_kept() -> None:
    with paced_collections():
        gc.set_threshold(5000, 20, 20)
    assert gc.get_threshold() == (5000, 20, 20)


def test_runner_paces_while_episodes_run() -> None:
    seen: list[tuple[int, int, int]] = []

    class Watching(OraclePolicy):
        async def act(self, observation: Observation) -> PolicyTurn:
            seen.append(gc.get_threshold())
            await asyncio.sleep(0)  # let the other episodes interleave
            return await super().act(observation)

    pairs = [(t, 1) for t in LedgerEnv.tasks.sample(6, 3, difficulties=[1])]
    result = asyncio.run(
        run(
            RunSpec(env="ledger", policy="Watching", jobs=pairs, concurrency=3),
            LocalExecutor(LedgerEnv, Watching),
        )
    )
    assert result.summary["success_rate"] == 1.0
    assert seen and set(seen) == {PACED}
    assert gc.get_threshold() == DEFAULT


def _oracle_ledger_run(episodes: int, *, concurrency: int) -> None:
    """A local oracle run of ``episodes`` difficulty-1 ledger tasks, each one counted."""
    pairs = [(t, 1) for t in LedgerEnv.tasks.sample(episodes, 3, difficulties=[1])]
    result = asyncio.run(
        run(
            RunSpec(env="ledger", policy="oracle", jobs=pairs, concurrency=concurrency),
            LocalExecutor(LedgerEnv, OraclePolicy),
        )
    )
    assert result.summary["episodes"] == episodes


def test_a_local_run_paces_once_from_open_to_close(monkeypatch: pytest.MonkeyPatch) -> None:
    """Between two episodes of a run (here one at a time) the thresholds stay raised: they
    are set once when the run opens its executor and restored once when it closes it."""
    calls: list[tuple[int, ...]] = []
    real = gc.set_threshold

    def set_threshold(*thresholds: int) -> None:
        calls.append(thresholds)
        real(*thresholds)

    monkeypatch.setattr(gc, "set_threshold", set_threshold)
    _oracle_ledger_run(5, concurrency=1)
    assert calls == [PACED, DEFAULT]
    assert gc.get_threshold() == DEFAULT


def test_a_run_stays_paced_through_its_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    """The summary's walk over every episode record runs with the thresholds still raised
    (restored with the default ones it set off a full collection over the whole heap)."""
    from gymforge.rollout import runner

    seen: list[tuple[int, int, int]] = []
    real = runner.summarize

    def summarize(*args: object, **kwargs: object) -> dict[str, object]:
        seen.append(gc.get_threshold())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(runner, "summarize", summarize)
    _oracle_ledger_run(3, concurrency=2)
    assert seen == [PACED]
    assert gc.get_threshold() == DEFAULT


def test_the_shared_context_holds_across_awaits_and_nesting() -> None:
    """One context object serves every episode (it holds no state): episodes interleaved on
    one loop, one of them failing, each enter and exit once, as a fresh context each."""
    import asyncio

    async def episode(fail: bool) -> None:
        with paced_collections():
            await asyncio.sleep(0)
            assert gc.get_threshold() != DEFAULT
            if fail:
                raise RuntimeError("episode failed")

    async def run() -> None:
        done = await asyncio.gather(episode(False), episode(True), return_exceptions=True)
        assert isinstance(done[1], RuntimeError) and done[0] is None

    asyncio.run(run())
    assert gc.get_threshold() == DEFAULT
    assert paced_collections() is paced_collections()
