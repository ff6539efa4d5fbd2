"""``ledger``: the reference tool-use environment.

The agent is a bank clerk. It must find customers by name (distractors share names), list
their accounts, and make the requested transfers, then reply. It exercises every part of the
contract: several turns, tools over a small world state, seeded faults (every task from
difficulty 2 up has a forced timeout on ``list_accounts``, plus random faults), success,
failure (wrong, missing or extra transfers) and truncation (the step budget). The verdict's
``score`` is the share of right transfers among those requested or made: a transfer made
besides the request counts as one missed (``test_ledger_transfer_spray``). The task family,
its versions and the world it builds: ``gymforge.envs.ledger.tasks``.
"""

from __future__ import annotations

import random
from collections import Counter

from gymforge.core.env import EnvSpec
from gymforge.core.episode import Budget
from gymforge.core.errors import ToolError
from gymforge.core.types import Action, Reply, Task, ToolCall
from gymforge.envs.ledger.tasks import (
    FAMILY,
    Account,
    Customer,
    LedgerTruth,
    Move,
    Transfer,
    TransferFamily,
    World,
)
from gymforge.kit.tool_env import ToolEnv
from gymforge.qa_profile import QAProfile, ThroughputBudget
from gymforge.tasks import Split, TaskSource
from gymforge.tools import FaultPlan, tool
from gymforge.verify import Verdict

__all__ = [
    "FAMILY",
    "Account",
    "Customer",
    "LedgerEnv",
    "LedgerTruth",
    "Move",
    "Transfer",
    "TransferFamily",
    "World",
]


class LedgerEnv(ToolEnv[LedgerTruth, World]):
    spec = EnvSpec(
        "ledger",
        "1.0.0",  # the family versions its tasks; every recorded episode replays unchanged
        renderer_version="1",
        description="Bank clerk: look up customers and accounts, make transfers.",
    )
    tasks = TaskSource.of(
        [FAMILY],
        Split(regions={"ledger.transfer": {"three_transfers": lambda p: p["transfers"] == 3}}),
    )
    budget = Budget(max_steps=24)
    qa = QAProfile(
        verifier_kinds=("state",), throughput=ThroughputBudget(reset_p50_ms=20.0, steps_per_s=300.0)
    )
    system_prompt = (
        "You are a bank clerk. Use the tools to find customers (names are not "
        "unique: check the city) and their accounts, then make the transfers. "
        "Retry a call that fails with a retryable error."
    )

    def init_world(self, task: Task, r: random.Random) -> World:
        # The episode's own mutable world, validated once from the task's JSON (the parsed
        # truth is shared, read-only): a deep model_copy costs 7x, dump-then-validate 2x,
        # and allocating twice makes the collector walk every live episode's world again
        return World.model_validate(task.truth["world"])

    def fault_plan(self, task: Task) -> FaultPlan:
        if task.difficulty < 2:
            return FaultPlan()
        return FaultPlan(
            rates={
                "timeout": task.params["fault_rate"] / 2,
                "empty": task.params["fault_rate"] / 2,
            },
            tools=frozenset({"search_customers", "list_accounts"}),
            forced=(("list_accounts", 0, "timeout"),),
        )

    @tool
    def search_customers(self, name: str) -> list[Customer]:
        """Find customers whose name contains the given text.

        Args:
            name: Part of the customer's name, case-insensitive.
        """
        return [c for c in self.world.customers if name.lower() in c.name.lower()]

    @tool
    def list_accounts(self, customer_id: str) -> list[Account]:
        """List a customer's accounts with their balances.

        Args:
            customer_id: The customer id, such as C101.
        """
        if not any(c.customer_id == customer_id for c in self.world.customers):
            raise ToolError("not_found", f"no customer {customer_id[:50]}")
        return [a for a in self.world.accounts if a.customer_id == customer_id]

    @tool(writes=True)
    def transfer(self, from_account: str, to_account: str, amount_cents: int) -> Transfer:
        """Move money between two accounts.

        Args:
            from_account: Account id to debit.
            to_account: Account id to credit.
            amount_cents: Amount in cents, greater than zero.
        """
        accounts = {a.account_id: a for a in self.world.accounts}
        src, dst = accounts.get(from_account), accounts.get(to_account)
        if src is None or dst is None:
            raise ToolError("not_found", "unknown account id")
        if amount_cents <= 0 or from_account == to_account:
            raise ToolError("validation", "amount must be > 0 and the accounts must differ")
        if src.balance_cents < amount_cents:
            raise ToolError("conflict", "insufficient funds")
        src.balance_cents -= amount_cents
        dst.balance_cents += amount_cents
        done = Transfer(
            transfer_id=f"T{len(self.world.transfers) + 1}",
            from_account=from_account,
            to_account=to_account,
            amount_cents=amount_cents,
        )
        self.world.transfers.append(done)
        return done

    def verify(self, task: Task, world: World, reply: str) -> Verdict:
        wanted = sorted((m.source, m.to, m.amount) for m in self.truth_of(task).moves)
        made = sorted((t.from_account, t.to_account, t.amount_cents) for t in world.transfers)
        # as multisets: a transfer the task lists twice is missing if it is made once
        missing = sorted((Counter(wanted) - Counter(made)).elements())
        extra = sorted((Counter(made) - Counter(wanted)).elements())
        reason = (
            None
            if not (missing or extra)
            else "no_change"
            if not made
            else ("collateral" if extra and not missing else "wrong_transfers")
        )
        return Verdict(
            passed=reason is None,
            reason=reason,
            verifier="ledger.transfers@1",
            # the right transfers among all requested or made: one made besides the request
            # costs as much as one missing, so spraying look-alike accounts earns no credit
            score=(len(wanted) - len(missing)) / (len(wanted) + len(extra)),
            facts={
                "expected": len(wanted),
                "made": len(made),
                "missing": len(missing),
                "extra": len(extra),
            },
        )

    def oracle_plan(self, task: Task) -> list[Action]:
        """The reference path: per customer search then list accounts; then each transfer."""
        truth = self.truth_of(task)
        owner = {a.account_id: a.customer_id for a in truth.world.accounts}
        calls: list[Action] = []
        seen: set[str] = set()
        for m in truth.moves:
            for name, acct in ((m.from_name, m.source), (m.to_name, m.to)):
                if owner[acct] not in seen:
                    seen.add(owner[acct])
                    calls += [
                        ToolCall(name="search_customers", arguments={"name": name}),
                        ToolCall(name="list_accounts", arguments={"customer_id": owner[acct]}),
                    ]
            calls.append(
                ToolCall(
                    name="transfer",
                    arguments={
                        "from_account": m.source,
                        "to_account": m.to,
                        "amount_cents": m.amount,
                    },
                )
            )
        return [*calls, Reply(text="All transfers are done.")]
