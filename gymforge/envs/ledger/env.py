"""``ledger``: the reference tool-use environment.

The agent is a bank clerk. It must find customers by name (distractors share names), list
their accounts, and make the requested transfers, then reply. It exercises every part of the
contract: several turns, tools over a small world state, seeded faults (every task from
difficulty 2 up has a forced timeout on ``list_accounts``, plus random faults), success,
failure (wrong, missing or extra transfers) and truncation (the step budget). The verdict's
``score`` is the share of right transfers among those requested or made: a transfer made
besides the request counts as one missed (``test_ledger_transfer_spray``).
"""

from __future__ import annotations

import random
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from gymforge.core.env import EnvSpec
from gymforge.core.episode import Budget
from gymforge.core.errors import ToolError
from gymforge.core.types import Action, Reply, Task, ToolCall
from gymforge.kit.tool_env import ToolEnv
from gymforge.qa_profile import QAProfile, ThroughputBudget
from gymforge.tasks import ChoiceKnob, IntKnob, ParamSpace, Split, TaskFamily, TaskSource
from gymforge.tasks.trusted import trusted
from gymforge.tools import FaultPlan, tool
from gymforge.verify import Verdict

FIRST = ["Ana", "Ben", "Chen", "Dara", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun"]
LAST = ["Lopez", "Okafor", "Smith", "Tanaka", "Weber", "Novak"]
CITIES = ["Lyon", "Osaka", "Lagos", "Quito", "Perth", "Oslo"]
Kind = Literal["checking", "savings"]


class Customer(BaseModel):
    customer_id: str
    name: str
    city: str


class Account(BaseModel):
    account_id: str
    customer_id: str
    kind: Kind
    balance_cents: int


class Transfer(BaseModel):
    transfer_id: str
    from_account: str
    to_account: str
    amount_cents: int


class World(BaseModel):
    customers: list[Customer]
    accounts: list[Account]
    transfers: list[Transfer] = []


class Move(BaseModel):
    """One transfer the task asks for (``from`` in ``Task.truth``: a Python keyword here)."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_by_name=True)

    source: str = Field(validation_alias="from", serialization_alias="from")
    to: str
    amount: int
    from_name: str
    to_name: str


class LedgerTruth(BaseModel):
    """The seed world and the transfers to make."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    world: World
    moves: list[Move]


PEOPLE = tuple((f, la, c) for f in FIRST for la in LAST for c in CITIES)
"""Every (first, last, city) combination, in a fixed order (sampled per task)."""
NAMES = {(f, la): f"{f} {la}" for f in FIRST for la in LAST}
"""Each full name, made once: every task's customers share these strings."""
CUSTOMER_IDS = tuple(f"C{100 + i}" for i in range(32))
"""The first customer ids (``C100`` on), made once and shared as ``NAMES`` are."""


class TransferFamily(TaskFamily[LedgerTruth]):
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, LedgerTruth]:
        people = r.sample(PEOPLE, params["customers"])
        # distractors: every second customer shares the previous one's name, in another city
        for i in range(1, len(people), 2):
            first, last, _ = people[i - 1]
            taken = {c for f, la, c in people if (f, la) == (first, last)}
            people[i] = (first, last, r.choice([c for c in CITIES if c not in taken]))
        # trusted (here and below): strings and ints this build made, of the declared types
        # (tests/tasks/test_trusted_truth.py validates every one)
        customers = [
            trusted(
                Customer,
                customer_id=CUSTOMER_IDS[i] if i < len(CUSTOMER_IDS) else f"C{100 + i}",
                name=NAMES[f, la],
                city=c,
            )
            for i, (f, la, c) in enumerate(people)
        ]
        accounts = [
            trusted(
                Account,
                account_id=f"A{r.randrange(10_000, 99_999)}{k[0].upper()}",
                customer_id=cu.customer_id,
                kind=k,
                balance_cents=r.randrange(50_00, 5_000_00),
            )
            for cu in customers
            for k in ("checking", "savings")
        ]
        moves, lines = [], []
        for _ in range(params["transfers"]):
            src, dst = r.sample(customers, 2)
            sk, dk = r.choice(("checking", "savings")), r.choice(("checking", "savings"))
            amount = r.randrange(1_00, 50_00)
            a_src = next(a for a in accounts if a.customer_id == src.customer_id and a.kind == sk)
            a_dst = next(a for a in accounts if a.customer_id == dst.customer_id and a.kind == dk)
            moves.append(
                trusted(
                    Move,
                    source=a_src.account_id,
                    to=a_dst.account_id,
                    amount=amount,
                    from_name=src.name,
                    to_name=dst.name,
                )
            )
            lines.append(
                f"- ${amount / 100:.2f} from {src.name} of {src.city} ({sk}) "
                f"to {dst.name} of {dst.city} ({dk})"
            )
        prompt = (
            "Make these transfers, each exactly once:\n"
            + "\n".join(lines)
            + "\nReply with a short confirmation when all are done."
        )
        world = trusted(World, customers=customers, accounts=accounts, transfers=[])
        return prompt, trusted(LedgerTruth, world=world, moves=moves)


def _levels(
    customers: tuple[int, int], transfers: tuple[int, int], faults: tuple[float, ...]
) -> ParamSpace:
    return ParamSpace(
        {
            "customers": IntKnob(*customers),
            "transfers": IntKnob(*transfers),
            "fault_rate": ChoiceKnob(faults),
        }
    )


FAMILY = TransferFamily(
    "ledger.transfer",
    1,
    {
        1: _levels((2, 3), (1, 1), (0.0,)),
        2: _levels((4, 5), (1, 2), (0.1,)),
        3: _levels((6, 8), (2, 3), (0.2,)),
    },
)


class LedgerEnv(ToolEnv[LedgerTruth, World]):
    spec = EnvSpec(
        "ledger",
        "1.0.0",
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
        missing = [m for m in wanted if m not in made]
        extra = list(made)
        for m in wanted:
            if m in extra:
                extra.remove(m)
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
