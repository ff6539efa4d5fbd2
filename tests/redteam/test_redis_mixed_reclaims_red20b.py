"""Red team (every episode counted, the Redis backend): a pool whose workers run with
different ``--max-reclaims`` lets a failure that ends its worker skip its steps' costs.

Since the first taker of a task only marks that its agent acted (``keeps_actions``: its
actions are kept only when no takeover is allowed, ``--max-reclaims 0``), a probe relies on
the last taker being a takeover. ``--max-reclaims`` is each worker's own flag: in a pool
where some run with 0 and some with the default 2, a task first taken by a default worker
whose agent acts and kills it is taken over by a 0 worker, which probes at once (one
takeover is past its allowance) and replays the first taker's actions, none of them kept:
the episode is counted at its reset, reward 0, where its steps had cost -0.11. With the
uniform values 0, 1, 2 and 5 every failure kept its steps (2 is
``test_redis_worker_death_escapes_red20.py``; 0, 1 and 5 held the same, 50 of 50 at -0.11).
"""

from __future__ import annotations

from pathlib import Path

import pytest

redis = pytest.importorskip("redis")

import planted_worker_exit  # noqa: E402
from test_redis_worker_death_escapes_red20 import EXITER, HONEST, _die, counted, play  # noqa: E402

from tests.rollout.redis_helpers import REDIS_SERVER, redis_server  # noqa: E402

pytestmark = pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed")


def mixed(started: int) -> int:
    """Worker starts alternate: ``--max-reclaims`` 2 (the default), then 0."""
    return 2 if started % 2 == 0 else 0


def test_a_pool_of_mixed_max_reclaims_pays_each_failure_its_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over 100 tasks (50 the policy cannot solve) on a pool alternating ``--max-reclaims``
    2 and 0: every failure the killer's worker died on is counted with the step before its
    death (the invalid call, -0.11), as on a uniform pool, and the killer earns no more than
    the plain failer. Before, in one run: 13 of the 50 failures (those a 0 worker took over
    from a default worker's first take; which worker takes over varies) were counted at
    their reset, 0 steps, reward 0: mean reward 0.454 against the plain failer's 0.435
    (0.44 on a uniform pool)."""
    n = 100
    monkeypatch.setattr(planted_worker_exit, "die", _die)
    with redis_server(tmp_path) as url:
        honest, _ = play(url, HONEST, n, tmp_path / "honest", reclaims=mixed)
    with redis_server(tmp_path) as url:
        trap, trap_deaths = play(url, EXITER, n, tmp_path / "trap", reclaims=mixed)
    plain, killer = counted(honest), counted(trap)
    assert plain["written"] == n and plain["success"] == 0.5, plain
    assert killer["success"] == plain["success"], (killer, plain)
    assert trap_deaths > 0 and killer["unwritten"] == 0 and killer["written"] == n, killer
    failed = [e for e in trap.episodes if not e["success"]]
    got = sorted((e["steps"], round(e["reward"], 6)) for e in failed)
    assert set(got) == {(1, -0.11)}, got
    assert killer["mean_reward"] <= plain["mean_reward"] + 0.005, (killer, plain)
