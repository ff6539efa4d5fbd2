"""``rollout.event_loop``: the loop gymforge starts for its own runs, and the switch for it."""

from __future__ import annotations

import asyncio
import builtins
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import uvloop

from gymforge.core.errors import UserError
from gymforge.core.seeding import canonical_json
from gymforge.registry.handle import open_env
from gymforge.rollout import event_loop
from gymforge.rollout.event_loop import loop_factory, run_on_loop
from gymforge.rollout.executors import LocalExecutor
from gymforge.rollout.runner import run_sync
from gymforge.rollout.scripted import scripted_policy
from gymforge.rollout.spec import RunSpec

RUN_SPECIFIC = ("run_id", "episode_id", "timestamp", "timing", "digest")


async def _loop_type() -> type:
    return type(asyncio.get_running_loop())


@pytest.mark.parametrize("value", [None, "auto", "", " UVLOOP "])
def test_uvloop_by_default_and_by_name(monkeypatch: pytest.MonkeyPatch, value: str | None) -> None:
    if value is None:
        monkeypatch.delenv(event_loop.ENV_VAR, raising=False)
    else:
        monkeypatch.setenv(event_loop.ENV_VAR, value)
    assert run_on_loop(_loop_type()) is uvloop.Loop


def test_asyncio_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(event_loop.ENV_VAR, "asyncio")
    assert loop_factory() is None
    assert issubclass(run_on_loop(_loop_type()), asyncio.BaseEventLoop)


def _no_uvloop(monkeypatch: pytest.MonkeyPatch) -> None:
    real = builtins.__import__

    def fake(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "uvloop":
            raise ImportError("No module named 'uvloop'")
        return real(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "uvloop")
    monkeypatch.setattr(builtins, "__import__", fake)


def test_without_uvloop_auto_falls_back_and_a_demand_for_it_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _no_uvloop(monkeypatch)
    monkeypatch.setenv(event_loop.ENV_VAR, "auto")
    assert issubclass(run_on_loop(_loop_type()), asyncio.BaseEventLoop)
    monkeypatch.setenv(event_loop.ENV_VAR, "uvloop")
    with pytest.raises(UserError, match="uvloop does not import"):
        loop_factory()


def test_an_unknown_choice_is_refused_and_the_coroutine_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(event_loop.ENV_VAR, "trio")
    main = _loop_type()
    with pytest.raises(UserError, match="GYMFORGE_EVENT_LOOP is 'trio'"):
        run_on_loop(main)
    assert main.cr_frame is None  # closed: never awaited, no warning at collection


def test_a_run_records_the_same_trajectories_on_either_loop(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """What a run writes does not depend on the loop that played it: every record of one
    seeded ``random`` run, less the run's own ids, times and digests, in file order (the
    runner writes in job order here: one job in flight)."""
    monkeypatch.delenv("GYMFORGE_SEAL_KEY", raising=False)
    handle = open_env("ledger", None)
    assert handle.tasks is not None
    jobs = [(t, 0) for t in handle.tasks.sample(8, 0, "train")]

    def play(choice: str) -> list[str]:
        monkeypatch.setenv(event_loop.ENV_VAR, choice)
        out = tmp_path / choice
        spec = RunSpec(env="ledger", policy="random", jobs=jobs, out=out, concurrency=1)
        result = run_sync(spec, LocalExecutor(handle.factory, scripted_policy("random")))
        assert not result.errors and result.summary["episodes"] == len(jobs)
        lines = (out / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()
        kept = [{k: v for k, v in json.loads(ln).items() if k not in RUN_SPECIFIC} for ln in lines]
        return [canonical_json(r) for r in kept]

    on_uvloop = play("uvloop")
    assert len(on_uvloop) > 2 * len(jobs)  # steps too, not only the episodes' ends
    assert on_uvloop == play("asyncio")
