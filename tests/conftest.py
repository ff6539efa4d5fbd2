"""Shared fixtures: ledger environments behind the sync facade, an oracle driver, and each
built-in environment's full QA report (run once per session)."""

from __future__ import annotations

import asyncio
import gc
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from gymforge.core import StepResult, SyncEnvironment
from gymforge.envs.ledger import LedgerEnv
from gymforge.qa import QAReport, QATarget, run_qa
from gymforge.rollout import gcpace
from tests.budget import QUICK_QA, without_speed_budget
from tests.memory_guard import (  # noqa: F401  (hooks: a runaway test fails alone, named)
    pytest_configure,
    pytest_runtest_logstart,
    pytest_terminal_summary,
    pytest_unconfigure,
)

# tests/engine needs a real vLLM server: only `make test-engine` (GYMFORGE_ENGINE=1) runs it
collect_ignore = [] if os.environ.get("GYMFORGE_ENGINE") == "1" else ["engine"]

# No property test has a wall-clock deadline (hypothesis' default is 200 ms an example, which a
# loaded machine misses): the suite asserts no timing. Loaded before any test module is
# imported, so every ``@settings(...)`` inherits it.
settings.register_profile("gymforge", deadline=None)
settings.load_profile("gymforge")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Make ``--dist loadgroup`` (``make test``) honour the ``xdist_group`` marks.

    pytest-xdist sends the tests of one group to one worker by the ``@NAME`` suffix its
    worker adds to their node ids. It adds it by assigning ``item._nodeid``, which pytest
    9.2 no longer reads (a node's id is ``item._id``): the suffix was lost, and every group
    was split over the workers (each built-in's QA report was made on both, and the Ray tests
    could start a local cluster on each at once). This adds the suffix as xdist would, on an
    xdist worker of a loadgroup run only, and only where it is missing."""
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        names = {
            str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
            for mark in item.iter_markers("xdist_group")
        }
        suffix = "@" + "_".join(sorted(names))
        if not names or item.nodeid.endswith(suffix):  # xdist's own suffix was read
            continue
        node_id = getattr(item, "_id", None)
        if node_id is not None and str(node_id) == item.nodeid:
            item._id = type(node_id).parse(item.nodeid + suffix)


@pytest.fixture(autouse=True, scope="session")
def _no_ambient_seal_key() -> Iterator[None]:
    """A developer's $GYMFORGE_SEAL_KEY must not seal (or refuse) the tests' files, module
    fixtures' included (hence session scope)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("GYMFORGE_SEAL_KEY", raising=False)
        yield


@pytest.fixture(scope="session")
def mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One mypy ``--cache-dir`` for the tests that run strict mypy on a snippet (the same
    options each time): the first analyses gymforge's modules, the others reuse that (mypy
    rechecks what changed). Each xdist worker has its own."""
    return tmp_path_factory.mktemp("mypy-cache")


@pytest.fixture(autouse=True)
def _collector_thresholds_kept() -> Iterator[None]:
    """Fail a test that leaves the garbage collector's thresholds changed with no episode in
    flight (``gymforge.rollout.gcpace`` restores its own when the last one ends): the rest
    of its worker's run would collect on another schedule. mypy's API, run in-process, set
    them to ``(200000, 30, 30)`` for the rest of a worker's run unnoticed. They are put
    back before the failure is reported."""
    before = gc.get_threshold()
    yield
    after = gc.get_threshold()
    if after != before and gcpace.in_flight() == 0:
        gc.set_threshold(*before)
        pytest.fail(f"the test left the collector's thresholds at {after} (were {before})")


@pytest.fixture
def young_heap() -> Iterator[None]:
    """For a test that asserts, after ``gc.collect()``, that objects it made are freed (or
    kept): everything older than the test is frozen (``gc.freeze``) while it runs, so each
    collection traverses only what the test made. A worker's heap late in a run makes a
    full collection take seconds otherwise. What the test made is collected as before:
    none of it is frozen, and a garbage cycle of its objects runs through no frozen object
    unless the test links them into an older one (none of these tests does). The frozen
    objects go back to the collector at teardown."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


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


@pytest.fixture(scope="session")
def builtin_qa_report() -> Callable[[str], QAReport]:
    """``builtin_qa_report(env_id)``: ``run_qa(QATarget.load(env_id), QUICK_QA)``, run at
    most once per session and environment. Every test that judges a built-in's
    full report (the suite's all-built-ins test, the environment's own test, served-vs-local)
    shares it instead of paying for the ten checks again. Such tests carry
    ``pytest.mark.xdist_group(f"qa-{env_id}")`` so that one xdist worker runs them all."""
    reports: dict[str, QAReport] = {}

    def report(env_id: str) -> QAReport:
        if env_id not in reports:
            reports[env_id] = without_speed_budget(run_qa(QATarget.load(env_id), QUICK_QA))
        return reports[env_id]

    return report
