"""The seed world of a CRM task: three teams, their reps, accounts with contacts,
opportunities along the pipeline and past activities, drawn from one seeded ``r``.

Names are unique where the scenarios need them to be (company names, domains, e-mail
addresses); a scenario that wants a look-alike (two contacts called Dana at one account,
a duplicate account) asks for it explicitly.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

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
        self._bases = {k: self.r.randrange(1000, 8000) for k in ("AC", "CT", "OP", "AV")}

    def _id(self, prefix: str) -> str:
        n = self._n[prefix] = self._n.get(prefix, 0) + 1
        return f"{prefix}-{self._bases[prefix] + 7 * n}"

    def _past(self, lo: int, hi: int) -> str:
        return iso(self.now - self.r.randrange(lo, hi) * DAY - self.r.randrange(0, 36_000))

    def other_team(self) -> str:
        return self.r.choice([t for t in TEAMS if t != self.team])

    def owner(self, team: str) -> str:
        i = list(TEAMS).index(team)
        return f"U-{10 * i + self.r.randrange(1, 3)}"

    def account(self, team: str | None = None, base: str | None = None, **over: Any) -> Row:
        team = team or self.team
        base = base or self._names.pop()
        created = self._past(200, 900)
        row: Row = {
            "id": self._id("AC"),
            "name": f"{base} {self.r.choice(SUFFIXES)}",
            "domain": base.lower().replace(" ", "") + ".com",
            "industry": self.r.choice(INDUSTRIES),
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
        r = self.r
        return f"+1-{r.randrange(200, 990)}-555-{r.randrange(1000, 9999)}"

    def contact(self, account: Row, first: str | None = None, **over: Any) -> Row:
        taken = {c["first_name"] for c in self.contacts if c["account_id"] == account["id"]}
        first = first or self.r.choice([f for f in FIRST if f not in taken])
        used = {
            c["last_name"]
            for c in self.contacts
            if c["account_id"] == account["id"] and c["first_name"] == first
        }
        last = self.r.choice([n for n in LAST if n not in used])
        created = self._past(30, 200)
        row: Row = {
            "id": self._id("CT"),
            "account_id": account["id"],
            "first_name": first,
            "last_name": last,
            "email": f"{first}.{last}@{account['domain']}".lower(),
            "phone": self.phone(),
            "title": self.r.choice(TITLES),
            "status": "active",
            "merged_into": None,
            "created_at": created,
            "updated_at": created,
        }
        row.update(over)
        self.contacts.append(row)
        return row

    def opportunity(self, account: Row, stage: str | None = None, **over: Any) -> Row:
        stage = stage or self.r.choice(OPEN)
        taken = {o["name"] for o in self.opportunities if o["account_id"] == account["id"]}
        deal = self.r.choice([d for d in DEALS if f"{account['name']} - {d}" not in taken])
        people = [c for c in self.contacts if c["account_id"] == account["id"]]
        created = self._past(20, 150)
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
            row["contact_id"] = self.r.choice(people)["id"]
        if "amount_cents" in need:
            row["amount_cents"] = self.amount()
        if "close_date" in need:
            row["close_date"] = self.future_date()
        row.update(over)
        self.opportunities.append(row)
        return row

    def amount(self) -> int:
        return self.r.randrange(8, 400) * 500_00

    def future_date(self) -> str:
        return iso(self.now + self.r.randrange(10, 120) * DAY)[:10]

    def activity(self, account: Row, contact: Row | None = None) -> Row:
        row: Row = {
            "id": self._id("AV"),
            "kind": self.r.choice(("call", "email", "meeting")),
            "subject": self.r.choice(("Intro call", "Pricing question", "Quarterly review")),
            "account_id": account["id"],
            "contact_id": contact["id"] if contact else None,
            "opportunity_id": None,
            "created_at": self._past(1, 60),
        }
        self.activities.append(row)
        return row

    def filler(self, account: Row, contacts: int, opportunities: int) -> None:
        """Give ``account`` some contacts, opportunities and history."""
        people = [self.contact(account) for _ in range(contacts)]
        for _ in range(opportunities):
            self.opportunity(account)
        if people and self.r.random() < 0.6:
            self.activity(account, self.r.choice(people))

    def distractors(self, n: int) -> None:
        """``n`` more accounts, a third of them another team's."""
        for _ in range(n):
            team = self.other_team() if self.r.random() < 0.35 else self.team
            self.filler(self.account(team), self.r.randrange(1, 4), self.r.randrange(0, 3))

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
