"""Attack: make a transfer the task lists twice only once, and pass.

Version 2 of ``ledger.transfer`` can draw the same transfer twice (same accounts, same
amount): ``ledger.transfer/v2/d3/s1154200`` asks for "$18.59 from Eli Okafor of Lagos
(savings) to Ana Lopez of Lagos (checking)" on two lines, "each exactly once". The verdict
counted a requested transfer as made when one like it was made at all (``m in made``), so
making it once (one transfer short) passed with score 1. Success would be a pass with a
listed transfer missing; the verdict compares the requested and made transfers as multisets,
so one short is ``wrong_transfers`` and making both still passes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gymforge.core import Reply, SyncEnvironment, ToolCall

TASK_ID = "ledger.transfer/v2/d3/s1154200"


def _run(env: SyncEnvironment, moves: list[tuple[str, str, int]]) -> dict[str, Any]:
    env.reset(TASK_ID, 0)
    for src, dst, amount in moves:
        result = env.step(
            ToolCall(
                name="transfer",
                arguments={"from_account": src, "to_account": dst, "amount_cents": amount},
            )
        ).info["tool_result"]
        assert result["ok"], result
    verdict: dict[str, Any] = env.step(Reply(text="All transfers are done.")).info["verdict"]
    return verdict


def test_a_transfer_listed_twice_and_made_once_fails(
    make_sync: Callable[..., SyncEnvironment],
) -> None:
    from gymforge.envs.ledger.tasks import FAMILY

    moves = [(m.source, m.to, m.amount) for m in FAMILY.truth_of(FAMILY.resolve(TASK_ID)).moves]
    assert moves[0] == moves[2] and len(set(moves)) == 2  # the task lists one transfer twice
    once = _run(make_sync(), moves[:2])
    assert once["passed"] is False, once
    assert once["reason"] == "wrong_transfers"
    assert once["facts"]["missing"] == 1
    both = _run(make_sync(), moves)
    assert both["passed"] is True, both
