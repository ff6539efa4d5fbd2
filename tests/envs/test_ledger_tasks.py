"""Every ledger task drawn for new samples can be completed: it generates, the requested
transfers go through in the order given (no source account runs short), no two accounts
share an id (a transfer from or to another customer's account must not pass) and no two
customers share both name and city. Version 1 ids still name the tasks version 1 made."""

from __future__ import annotations

import hashlib
from collections import Counter

import pytest

from gymforge.core.seeding import canonical_json
from gymforge.envs.ledger import LedgerEnv
from gymforge.envs.ledger.env import FAMILY, LedgerTruth
from tests.budget import examples


def defects(truth: LedgerTruth) -> list[str]:
    """What makes the task impossible or ambiguous: ``[]`` for a sound one."""
    found = []
    people = Counter((c.name, c.city) for c in truth.world.customers)
    found += [f"two customers {n} of {c}" for (n, c), k in sorted(people.items()) if k > 1]
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


V1_DIGEST = "82f07b3094667c7b"
"""Measured on the version-1 code before version 2 existed: the id, prompt, truth and params
of 40 tasks per level and of the defective ids below."""

V1_DEFECTIVE = {
    "ledger.transfer/v1/d2/s170595982": "short",
    "ledger.transfer/v1/d3/s233569973": "short",
    "ledger.transfer/v1/d2/s242276380": "duplicate",
    "ledger.transfer/v1/d2/s171529914": "duplicate",
    "ledger.transfer/v1/d3/s269472593": "duplicate",
}
"""Version-1 tasks a red team found defective: a source account runs short (no order of the
transfers completes the task), or two customers' accounts share an id."""


def test_version_1_ids_resolve_to_the_tasks_version_1_made() -> None:
    """Recorded runs replay: version-1 ids, the defective ones included, still name exactly
    the tasks version 1 generated (the defects are documented, not repaired)."""
    assert FAMILY.version == 2
    v1 = FAMILY.at_version(1)
    ids = [v1.task_id(d, s) for d in sorted(v1.levels) for s in range(40)]
    h = hashlib.sha256()
    for task_id in [*ids, *V1_DEFECTIVE]:
        task = LedgerEnv.tasks.resolve(task_id)
        assert task.task_id == task_id
        h.update(canonical_json([task.task_id, task.prompt, task.truth, task.params]).encode())
    assert h.hexdigest()[:16] == V1_DIGEST
    for task_id, kind in V1_DEFECTIVE.items():
        found = defects(FAMILY.truth_of(FAMILY.resolve(task_id)))
        assert len(found) == 1 and ("duplicate" in found[0]) == (kind == "duplicate"), found


def test_new_samples_are_version_2() -> None:
    ids = LedgerEnv.tasks.sample(12, 0, "all")
    assert all(i.startswith("ledger.transfer/v2/") for i in ids)
    assert FAMILY.task_id(3, 5) == "ledger.transfer/v2/d3/s5"


def test_a_version_1_id_that_never_generated_still_fails() -> None:
    """Four customers of one name among seven (at difficulty 3, seed 330238) leave the last
    of their distractors no city: version 1 raised, and still does (version 2 draws the
    customers again, below)."""
    with pytest.raises(IndexError):
        LedgerEnv.tasks.resolve("ledger.transfer/v1/d3/s330238")


def test_version_2_draws_customers_again_when_a_distractor_has_no_city_left() -> None:
    """At seed 90037 the first customers drawn are four of one name among eight: the third
    distractor of that name finds every city taken (where version 1's build raises)."""
    task = FAMILY.task(3, 90037)
    truth = FAMILY.truth_of(task)
    assert len(truth.world.customers) == 8 and defects(truth) == []
