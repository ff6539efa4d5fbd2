"""Every ledger task drawn for new samples can be completed: the requested transfers go
through in the order given (no source account runs short) and no two accounts share an id
(a transfer from or to another customer's account must not pass)."""

from __future__ import annotations

from collections import Counter

from gymforge.envs.ledger.env import FAMILY, LedgerTruth
from tests.budget import examples


def defects(truth: LedgerTruth) -> list[str]:
    """What makes the task impossible or ambiguous: ``[]`` for a sound one."""
    found = []
    ids = Counter(a.account_id for a in truth.world.accounts)
    found += [f"duplicate account id {i}" for i, n in sorted(ids.items()) if n > 1]
    balance = {a.account_id: a.balance_cents for a in truth.world.accounts}
    for m in truth.moves:
        if balance[m.source] < m.amount:
            found.append(f"{m.source} holds {balance[m.source]}, short of {m.amount}")
            break
        balance[m.source] -= m.amount
        balance[m.to] += m.amount
    return found


@examples(40_000)
def test_sampled_tasks_are_solvable_with_unique_accounts(examples: int) -> None:
    """``examples`` seeds at every difficulty, at the version new samples are drawn from
    (version 1 fails 6 of the default run's 12,000: seeds 572, 607, 866, 2951 and 2985 at
    difficulty 3, 3963 at difficulty 2)."""
    bad = {}
    for difficulty in sorted(FAMILY.levels):
        for seed in range(examples):
            task = FAMILY.task(difficulty, seed)
            found = defects(FAMILY.truth_of(task))
            if found:
                bad[task.task_id] = found
    assert bad == {}
