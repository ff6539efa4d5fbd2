"""``ledger.transfer``: the ledger's task family and the world it builds.

A task is a few customers (every second one shares the previous one's name, in another city),
a checking and a savings account each, and the transfers to make between them, listed in
the prompt by name, city and account kind. Knobs: ``customers``, ``transfers`` and
``fault_rate`` (which the environment's fault plan reads).

Version 2 (new samples are drawn from it) draws account ids unique within a task and gives
each account a balance that covers everything the task asks it to send, so the transfers
go through in the order given, or in any other (no account counts on money coming in). Its
draws are version 1's otherwise: an id that is taken is drawn again, a balance short of the
account's outgoing total is drawn again from that total up (the first draw conditioned on
covering it), and customers among whom a distractor finds no free city are drawn again.

Version 1 ids still resolve to the tasks version 1 made, defects included: about one
difficulty-2 or -3 task in 6,000 asks an account for more than it holds at that point (no
order completes it, so every policy scores 0), about one in 3,500 gives two customers'
accounts the same id (a transfer from or to the other customer's account can pass), and
rarely (seven or eight customers, several of one name) a difficulty-3 id fails to generate
at all (``ledger.transfer/v1/d3/s330238``). ``tests/envs/test_ledger_tasks.py`` holds
version 2 free of all three.
"""

from __future__ import annotations

import random
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from gymforge.tasks import ChoiceKnob, IntKnob, ParamSpace, TaskFamily
from gymforge.tasks.trusted import trusted

FIRST = ["Ana", "Ben", "Chen", "Dara", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun"]
LAST = ["Lopez", "Okafor", "Smith", "Tanaka", "Weber", "Novak"]
CITIES = ["Lyon", "Osaka", "Lagos", "Quito", "Perth", "Oslo"]
Kind = Literal["checking", "savings"]
KINDS: tuple[Kind, Kind] = ("checking", "savings")
MAX_BALANCE = 5_000_00
"""Balances are drawn below this (from ``50_00`` up)."""


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


def _people(r: random.Random, n: int, sound: bool) -> list[tuple[str, str, str]]:
    """``n`` customers' (first, last, city): every second one a distractor, sharing the
    previous one's name in a city no one of that name lives in. When a name has no such
    city left, version 1 fails (``IndexError``, from ``choice``); version 2 draws them all
    again."""
    while True:
        people = r.sample(PEOPLE, n)
        for i in range(1, len(people), 2):
            first, last, _ = people[i - 1]
            taken = {c for f, la, c in people if (f, la) == (first, last)}
            free = [c for c in CITIES if c not in taken]
            if sound and not free:
                break
            people[i] = (first, last, r.choice(free))
        else:
            return people


def _account_id(r: random.Random, kind: Kind) -> str:
    return f"A{r.randrange(10_000, 99_999)}{kind[0].upper()}"


class TransferFamily(TaskFamily[LedgerTruth]):
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, LedgerTruth]:
        sound = self.version >= 2  # every task well formed (module doc)
        people = _people(r, params["customers"], sound)
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
        # per account, in order: [customer id, kind, account id, balance] (version 1 draws an
        # id then a balance for each; version 2 draws an id again while it is taken)
        slots: list[tuple[str, Kind, str, int]] = []
        ids: set[str] = set()
        for cu in customers:
            for k in KINDS:
                account_id = _account_id(r, k)
                while sound and account_id in ids:
                    account_id = _account_id(r, k)
                ids.add(account_id)
                slots.append((cu.customer_id, k, account_id, r.randrange(50_00, MAX_BALANCE)))
        slot_of = {(cid, k): i for i, (cid, k, _, _) in enumerate(slots)}
        sends = [0] * len(slots)  # each account's outgoing total
        moves, lines = [], []
        for _ in range(params["transfers"]):
            src, dst = r.sample(customers, 2)
            sk, dk = r.choice(KINDS), r.choice(KINDS)
            amount = r.randrange(1_00, 50_00)
            i_src, i_dst = slot_of[src.customer_id, sk], slot_of[dst.customer_id, dk]
            sends[i_src] += amount
            moves.append(
                trusted(
                    Move,
                    source=slots[i_src][2],
                    to=slots[i_dst][2],
                    amount=amount,
                    from_name=src.name,
                    to_name=dst.name,
                )
            )
            lines.append(
                f"- ${amount / 100:.2f} from {src.name} of {src.city} ({sk}) "
                f"to {dst.name} of {dst.city} ({dk})"
            )
        if sound:  # a balance short of what the account sends: drawn again, from that up
            for i, (cid, k, account_id, balance) in enumerate(slots):
                if balance < sends[i]:
                    slots[i] = (cid, k, account_id, r.randrange(sends[i], MAX_BALANCE))
        accounts = [
            trusted(Account, account_id=a, customer_id=cid, kind=k, balance_cents=b)
            for cid, k, a, b in slots
        ]
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


LEVELS = {
    1: _levels((2, 3), (1, 1), (0.0,)),
    2: _levels((4, 5), (1, 2), (0.1,)),
    3: _levels((6, 8), (2, 3), (0.2,)),
}
V1 = TransferFamily("ledger.transfer", 1, LEVELS)
"""Version 1, as it generated: its ids resolve to the same tasks, rare defects included."""
FAMILY = TransferFamily("ledger.transfer", 2, LEVELS, older={1: V1})
"""Version 2: account ids unique within a task, every task solvable in the order given."""
