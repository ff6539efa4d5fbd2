"""Broken environments whose defects the first QA suite let through (issue: QA that
catches what it claims). Each is ``LedgerEnv`` (or, for a world write, ``SupportDeskEnv``)
with exactly one planted defect; ``CAUGHT_BY``
maps it to the check that must flag it and ``EVIDENCE`` to what the message must name.
Importable as ``tests.qa.hidden_defects:<Name>`` (or ``hidden_defects:<Name>`` under pytest),
so the fresh process of the cross-process checks can build them too.
"""

from __future__ import annotations

import datetime
import random
from typing import Any, ClassVar

from gymforge.core.errors import ToolError
from gymforge.core.types import Message, Task
from gymforge.envs.ledger import LedgerEnv
from gymforge.envs.ledger.env import FAMILY, Customer, Transfer, World
from gymforge.envs.support_desk import SupportDeskEnv
from gymforge.tasks import TaskSource
from gymforge.tools import tool
from gymforge.verify import Verdict
from gymforge.world.writes import world_write


class HashSeededEnv(LedgerEnv):
    """Defect: transfer ids come from an RNG seeded with Python's ``hash()`` of the task id:
    stable in one process, different in the next (``PYTHONHASHSEED``)."""

    @tool(writes=True)
    def transfer(self, from_account: str, to_account: str, amount_cents: int) -> Transfer:
        """Move money between two accounts.

        Args:
            from_account: Account id to debit.
            to_account: Account id to credit.
            amount_cents: Amount in cents, greater than zero.
        """
        done = LedgerEnv.transfer(self, from_account, to_account, amount_cents)
        assert self.task is not None
        r = random.Random(hash(self.task.task_id))
        done.transfer_id = f"T{r.randrange(10**9)}"
        return done


class DatedPromptEnv(LedgerEnv):
    """Defect: the reset observation tells today's date, read from the wall clock."""

    def render_reset(self, task: Task) -> list[Message]:
        today = datetime.date.today().isoformat()
        return [*super().render_reset(task), Message(role="user", content=f"Today is {today}.")]


class ClassCacheEnv(LedgerEnv):
    """Defect: ``search_customers`` caches results in a class-level dict keyed by the query,
    so a later episode (of another task) gets the customers of an earlier one. The oracle
    never reads search results, so the baselines stay green.

    The cache shows only when two tasks of the check's sample search one name. Its tasks are
    ``ledger.transfer`` version 1's, the sample this defect was planted on: two of the first
    four search one name (``test_class_cache_sample_shares_a_searched_name``); about a third
    of four-task samples do, and version 2's first four do not."""

    tasks = TaskSource.of([FAMILY.at_version(1)], LedgerEnv.tasks.split)
    _cache: ClassVar[dict[str, list[Customer]]] = {}

    @tool
    def search_customers(self, name: str) -> list[Customer]:
        """Find customers whose name contains the given text.

        Args:
            name: Part of the customer's name, case-insensitive.
        """
        key = name.lower()
        if key not in self._cache:
            self._cache[key] = LedgerEnv.search_customers(self, name)
        return self._cache[key]


class EmptyQueryCrashEnv(LedgerEnv):
    """Defect: ``search_customers`` indexes the first character of the query, so the
    schema-valid empty string raises ``IndexError`` (an ``internal`` "tool crashed")."""

    @tool
    def search_customers(self, name: str) -> list[Customer]:
        """Find customers whose name contains the given text.

        Args:
            name: Part of the customer's name, case-insensitive.
        """
        initial = name[0].lower()
        return [c for c in LedgerEnv.search_customers(self, name) if c.name[0].lower() == initial]


class PartialWriteEnv(LedgerEnv):
    """Defect: ``transfer`` debits the source account before it validates the destination
    and the amount, so a refused transfer leaves money missing."""

    @tool(writes=True)
    def transfer(self, from_account: str, to_account: str, amount_cents: int) -> Transfer:
        """Move money between two accounts.

        Args:
            from_account: Account id to debit.
            to_account: Account id to credit.
            amount_cents: Amount in cents, greater than zero.
        """
        world: World = self.world
        src = next((a for a in world.accounts if a.account_id == from_account), None)
        if src is None:
            raise ToolError("not_found", "unknown account id")
        src.balance_cents -= amount_cents
        dst = next((a for a in world.accounts if a.account_id == to_account), None)
        if dst is None:
            raise ToolError("not_found", "unknown account id")
        if amount_cents <= 0 or from_account == to_account:
            raise ToolError("validation", "amount must be > 0 and the accounts must differ")
        src.balance_cents += amount_cents
        return LedgerEnv.transfer(self, from_account, to_account, amount_cents)


class HalfCommitDeskEnv(SupportDeskEnv):
    """Defect: ``apply_credit`` is a ``world_write``, so it declares ``timeout`` side effects
    (the commit applied, then the answer timed out), but on its commit-timeout path it keeps
    only half the write: the audit-log row stays, the credit row is dropped. The same call
    succeeding writes both; an agent that retries with its key is told the credit exists."""

    @tool(writes=True)
    @world_write
    def apply_credit(
        self,
        case_id: str,
        account_id: str,
        amount_cents: int,
        reason: str = "",
        idempotency_key: str = "",
    ) -> dict[str, Any]:
        """Apply a goodwill credit to an account.

        Args:
            case_id: The case this credit belongs to.
            account_id: The account to credit, such as A-1234.
            amount_cents: The credit in cents.
            reason: A short reason, kept in the record.
            idempotency_key: A key that makes retries of this credit safe.
        """
        done: dict[str, Any] = SupportDeskEnv.apply_credit.__wrapped__(  # type: ignore[attr-defined]
            self, case_id, account_id, amount_cents, reason, idempotency_key
        )
        if self.writes.attrs.get("world_fault") == "commit_timeout":
            self.db.delete("credits", done["id"])
        return done


class RestyledPromptEnv(LedgerEnv):
    """Defect: the system prompt was reworded, but ``renderer_version`` still says "1": old
    runs replay against it with the same stamp and diverge at step 0."""

    system_prompt = LedgerEnv.system_prompt + " Be brief."


class NamesClaimEnv(LedgerEnv):
    """Defect: a verifier that believes a reply naming every recipient of the task's
    transfers and saying they were transferred, whatever the world state."""

    def verify(self, task: Task, world: World, reply: str) -> Verdict:
        names = {m["to_name"] for m in task.truth["moves"]}
        if "transferred" in reply.lower() and all(n in reply for n in names):
            return Verdict(passed=True, verifier="ledger.names-claim@0")
        return super().verify(task, world, reply)


CAUGHT_BY: dict[type[Any], str] = {
    HashSeededEnv: "replay_determinism",
    DatedPromptEnv: "replay_determinism",
    ClassCacheEnv: "reset_isolation",
    EmptyQueryCrashEnv: "error_paths",
    PartialWriteEnv: "error_paths",
    HalfCommitDeskEnv: "error_paths",
    RestyledPromptEnv: "trajectory_schema",
    NamesClaimEnv: "verifier_redteam",
}

EVIDENCE: dict[type[Any], tuple[str, ...]] = {
    HashSeededEnv: (
        "in a fresh process (PYTHONHASHSEED=",
        "with the real clock too",
        "transfer_id",
    ),
    DatedPromptEnv: ("in a fresh process", "only with the clock shifted", "Today is 20"),
    ClassCacheEnv: ("differs from the reference", "tool_result.content", "reference '", "reused '"),
    EmptyQueryCrashEnv: ("search_customers", "{'name': ''}", "IndexError", "internal"),
    PartialWriteEnv: ("transfer", "left the state changed", "balance_cents"),
    HalfCommitDeskEnv: (
        "apply_credit",
        "declared 'timeout'",
        "not as the same call succeeding",
        "credits",
    ),
    RestyledPromptEnv: ("renderer_version '1'", "Be brief.", "--record-golden"),
    NamesClaimEnv: ("judged a success", "claim_echo"),
}
"""Fragments the check's message must contain: the defect named, not just any failure."""

__all__: list[Any] = [*CAUGHT_BY]
