"""The seed world of a CRM task: three teams, their reps, accounts with contacts,
opportunities along the pipeline and past activities, drawn from one seeded ``r``.

Names are unique where the scenarios need them to be (company names, domains, e-mail
addresses); a scenario that wants a look-alike (two contacts called Dana at one account,
a duplicate account) asks for it explicitly.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from gymforge.envs.crm.pipeline import OPEN, REQUIRED
from gymforge.world.clock import iso

Row = dict[str, Any]
TEAMS = {"T-EAST": "Enterprise East", "T-WEST": "Enterprise West", "T-MID": "Mid-Market"}
COMPANIES = [
    "Acme",
    "Tooling",
    "Abbott",
    "Freight",
    "Borealis",
    "Labs",
    "Cobalt",
    "Dynamics",
    "Dunmore",
    "Foods",
    "Ember",
    "Analytics",
    "Fairlight",
    "Media",
    "Granite",
    "Health",
    "Harbor",
    "Logistics",
    "Ionic",
    "Power",
    "Juniper",
    "Retail",
    "Kestrel",
    "Aero",
    "Lumen",
    "Bank",
    "Meridian",
    "Steel",
    "Northwind",
    "Traders",
    "Orchid",
    "Pharma",
    "Pioneer",
    "Mills",
    "Quarry",
    "Works",
    "Redwood",
    "Clinics",
    "Sable",
    "Security",
    "Tidewater",
    "Energy",
    "Umber",
    "Textiles",
    "Vantage",
    "Motors",
    "Willow",
    "Schools",
    "Xenon",
    "Optics",
    "Yardley",
    "Farms",
    "Zephyr",
    "Travel",
    "Atlas",
    "Insurance",
    "Beacon",
    "Hotels",
    "Cedar",
    "Robotics",
    "Delta",
    "Paper",
    "Evergreen",
    "Water",
    "Falcon",
    "Mining",
    "Glacier",
    "Software",
]
PAIRS = [f"{COMPANIES[i]} {COMPANIES[i + 1]}" for i in range(0, len(COMPANIES) - 1, 2)]
SUFFIXES = ("Inc", "Corp", "Group", "Co", "LLC")
INDUSTRIES = ("manufacturing", "retail", "healthcare", "finance", "logistics", "software")
FIRST = [
    "Dana",
    "Alex",
    "Jordan",
    "Morgan",
    "Riley",
    "Casey",
    "Taylor",
    "Jamie",
    "Avery",
    "Quinn",
    "Rowan",
    "Sasha",
    "Emery",
    "Parker",
    "Reese",
    "Skyler",
    "Hayden",
    "Logan",
    "Drew",
    "Blake",
]
LAST = [
    "Kim",
    "Okafor",
    "Silva",
    "Novak",
    "Haddad",
    "Tanaka",
    "Weber",
    "Lopez",
    "Moreau",
    "Schmidt",
    "Rossi",
    "Costa",
    "Nguyen",
    "Patel",
    "Berg",
    "Ivanova",
    "Dubois",
    "Murphy",
    "Keller",
    "Santos",
]
TITLES = (
    "CFO",
    "VP Operations",
    "Head of IT",
    "Procurement Lead",
    "CTO",
    "Finance Manager",
    "Office Manager",
    "Director of Sales",
)
DEALS = ("Renewal", "Expansion", "Pilot", "Platform Upgrade", "Support Plan", "Analytics Add-on")
REPS = ("Ira Cole", "Mae Finch", "Ned Park", "Ola Reyes", "Pia Stone", "Rex Vale")
DAY = 86_400
T = TypeVar("T")


@dataclass
class SeedWorld:
    """A world under construction. ``now`` is the task's simulated start (epoch seconds)."""

    r: random.Random
    team: str
    now: int
    accounts: list[Row] = field(default_factory=list)
    contacts: list[Row] = field(default_factory=list)
    opportunities: list[Row] = field(default_factory=list)
    activities: list[Row] = field(default_factory=list)
    _names: list[str] = field(default_factory=list)
    _n: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._names = self.r.sample(PAIRS, len(PAIRS))
        self._bases = {k: self._int(1000, 8000) for k in ("AC", "CT", "OP", "AV")}
        self._people: dict[str, list[Row]] = {}

    # ``random()`` scaled, not ``randrange``/``choice``: generation draws hundreds of numbers
    # per task and these are several times cheaper (the same seeded stream either way)
    def _int(self, lo: int, hi: int) -> int:
        """A number in ``[lo, hi)``."""
        return lo + int(self.r.random() * (hi - lo))

    def _pick(self, seq: Sequence[T]) -> T:
        return seq[int(self.r.random() * len(seq))]

    def people(self, account: Row) -> list[Row]:
        """The account's contacts, in creation order."""
        return self._people.get(account["id"], [])

    def forget(self, contact: Row) -> None:
        """Take a drawn contact back out of the world (a person the request introduces)."""
        self.contacts.remove(contact)
        self._people[contact["account_id"]].remove(contact)

    def _id(self, prefix: str) -> str:
        n = self._n[prefix] = self._n.get(prefix, 0) + 1
        return f"{prefix}-{self._bases[prefix] + 7 * n}"

    def fresh_name(self) -> str:
        """A company name no account of this world has yet."""
        return self._names.pop()

    def past(self, lo: int, hi: int) -> str:
        """A time ``lo`` to ``hi`` days before now."""
        return iso(self.now - self._int(lo, hi) * DAY - self._int(0, 36_000))

    def other_team(self) -> str:
        return self._pick([t for t in TEAMS if t != self.team])

    def owner(self, team: str) -> str:
        i = list(TEAMS).index(team)
        return f"U-{10 * i + self._int(1, 3)}"

    def account(self, team: str | None = None, base: str | None = None, **over: Any) -> Row:
        team = team or self.team
        base = base or self.fresh_name()
        created = self.past(200, 900)
        row: Row = {
            "id": self._id("AC"),
            "name": f"{base} {self._pick(SUFFIXES)}",
            "domain": base.lower().replace(" ", "") + ".com",
            "industry": self._pick(INDUSTRIES),
            "phone": self.phone(),
            "team_id": team,
            "owner_id": self.owner(team),
            "status": "active",
            "merged_into": None,
            "created_at": created,
            "updated_at": created,
        }
        row.update(over)
        self.accounts.append(row)
        return row

    def phone(self) -> str:
        return f"+1-{self._int(200, 990)}-555-{self._int(1000, 9999)}"

    def contact(self, account: Row, first: str | None = None, **over: Any) -> Row:
        mates = self.people(account)
        taken = {c["first_name"] for c in mates}
        first = first or self._pick([f for f in FIRST if f not in taken])
        used = {c["last_name"] for c in mates if c["first_name"] == first}
        last = self._pick([n for n in LAST if n not in used])
        created = self.past(30, 200)
        row: Row = {
            "id": self._id("CT"),
            "account_id": account["id"],
            "first_name": first,
            "last_name": last,
            "email": f"{first}.{last}@{account['domain']}".lower(),
            "phone": self.phone(),
            "title": self._pick(TITLES),
            "status": "active",
            "merged_into": None,
            "created_at": created,
            "updated_at": created,
        }
        row.update(over)
        self.contacts.append(row)
        self._people.setdefault(account["id"], []).append(row)
        return row

    def opportunity(self, account: Row, stage: str | None = None, **over: Any) -> Row:
        people = self.people(account)
        stage = stage or self._pick(OPEN if people else OPEN[:1])  # seeds keep the rules
        taken = {o["name"] for o in self.opportunities if o["account_id"] == account["id"]}
        deal = self._pick([d for d in DEALS if f"{account['name']} - {d}" not in taken])
        created = self.past(20, 150)
        row: Row = {
            "id": self._id("OP"),
            "account_id": account["id"],
            "name": f"{account['name']} - {deal}",
            "stage": stage,
            "amount_cents": None,
            "close_date": None,
            "contact_id": None,
            "next_step": None,
            "loss_reason": None,
            "team_id": account["team_id"],
            "owner_id": account["owner_id"],
            "created_at": created,
            "updated_at": created,
        }
        need = REQUIRED[stage]
        if "contact_id" in need and people:
            row["contact_id"] = self._pick(people)["id"]
        if "amount_cents" in need:
            row["amount_cents"] = self.amount()
        if "close_date" in need:
            row["close_date"] = self.future_date()
        row.update(over)
        self.opportunities.append(row)
        return row

    def amount(self) -> int:
        return self._int(8, 400) * 500_00

    def future_date(self) -> str:
        return iso(self.now + self._int(10, 120) * DAY)[:10]

    def activity(self, account: Row, contact: Row | None = None) -> Row:
        row: Row = {
            "id": self._id("AV"),
            "kind": self._pick(("call", "email", "meeting")),
            "subject": self._pick(("Intro call", "Pricing question", "Quarterly review")),
            "account_id": account["id"],
            "contact_id": contact["id"] if contact else None,
            "opportunity_id": None,
            "created_at": self.past(1, 60),
        }
        self.activities.append(row)
        return row

    def filler(self, account: Row, contacts: int, opportunities: int) -> None:
        """Give ``account`` some contacts, opportunities and history."""
        people = [self.contact(account) for _ in range(contacts)]
        for _ in range(opportunities):
            self.opportunity(account)
        if people and self.r.random() < 0.6:
            self.activity(account, self._pick(people))

    def distractors(self, n: int) -> None:
        """``n`` more accounts, a third of them another team's."""
        for _ in range(n):
            team = self.other_team() if self.r.random() < 0.35 else self.team
            self.filler(self.account(team), self._int(1, 4), self._int(0, 3))

    def rows(self) -> dict[str, list[Row]]:
        users = [
            {"id": f"U-{10 * i + k}", "name": REPS[2 * i + k - 1], "team_id": t}
            for i, t in enumerate(TEAMS)
            for k in (1, 2)
        ]
        return {
            "teams": [{"id": t, "name": n} for t, n in TEAMS.items()],
            "users": users,
            "accounts": self.accounts,
            "contacts": self.contacts,
            "opportunities": self.opportunities,
            "activities": self.activities,
        }
