"""Support-desk scenarios: a seeded world (customer, account, months of invoices and
payments, distractors), the customer's issues, and the ground truth a correct agent reaches.

``build_scenario(kinds, params, r)`` returns the customer's opening message and the hidden
truth: the seed rows (``truth["world"]``), the persona the user simulator plays, and per
issue the expected effects and outcome code. Everything is drawn from ``r``.
"""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any

from gymforge.envs.support_desk import policy as P
from gymforge.envs.support_desk.truth import (
    Credit,
    DeskTruth,
    Escalation,
    Identity,
    Issue,
    PersonaTruth,
    Refund,
    SlotTruth,
)
from gymforge.tasks.trusted import trusted
from gymforge.world.clock import epoch, iso
from gymforge.world.render import money, page_of
from gymforge.world.sim import Tone

FIRST = ["Ana", "Ben", "Chen", "Dara", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lea"]
LAST = ["Lopez", "Okafor", "Smith", "Tanaka", "Weber", "Novak", "Haddad", "Silva"]
PLANS = [("PL-BASIC", "Basic", 19_99), ("PL-PLUS", "Plus", 39_99), ("PL-PRO", "Pro", 79_99)]
ADDONS = [
    ("Extra storage", 14_99),
    ("Priority support", 24_99),
    ("Device protection", 9_99),
    ("HD streaming pack", 12_99),
    ("Travel roaming pass", 29_99),
]
MONTHS = "January February March April May June July August September October November December"
DAY = P.DAY
KINDS = ("duplicate", "refund", "goodwill", "over_limit")


def _zip(region: str, r: random.Random) -> str:
    if region == "apac":
        return str(r.randrange(2000, 7999))
    if region == "eu":
        return f"{r.randrange(10, 96):02d}{r.randrange(0, 999):03d}"
    return f"{r.randrange(10000, 99999)}"


class Scenario:
    """Accumulates rows and truth for one task."""

    def __init__(self, params: dict[str, Any], r: random.Random) -> None:
        self.p, self.r = params, r
        self.rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.now = epoch("2024-02-01") + r.randrange(0, 300) * DAY + r.randrange(8, 18) * 3600
        self._next = {
            p: r.randrange(1000, 5000) for p in ("C", "A", "PM", "IN", "IL", "PY", "CS", "CR")
        }
        self.issues: list[dict[str, Any]] = []
        self.slots: list[SlotTruth] = []

    def id(self, prefix: str) -> str:
        self._next[prefix] += self.r.randrange(1, 9)
        return f"{prefix}-{self._next[prefix]}"

    def ts(self, days_ago: float) -> str:
        return iso(int(self.now - days_ago * DAY))

    # ---- the world ----------------------------------------------------------------------
    def customer(self, region: str, fraud: bool, months: int) -> dict[str, Any]:
        r = self.r
        first, last = r.choice(FIRST), r.choice(LAST)
        cust = {
            "id": self.id("C"),
            "name": f"{first} {last}",
            "email": f"{first.lower()}.{last.lower()}{r.randrange(1, 99)}@mail.example",
            "zip": _zip(region, r),
            "region": region,
            "created_at": self.ts(r.randrange(500, 2000)),
        }
        plan = r.choice(PLANS)
        acct = {
            "id": self.id("A"),
            "customer_id": cust["id"],
            "plan_id": plan[0],
            "status": "active",
            "fraud_hold": int(fraud),
            "opened_at": cust["created_at"],
        }
        methods = [
            {
                "id": self.id("PM"),
                "customer_id": cust["id"],
                "kind": kind,
                "last4": f"{r.randrange(0, 9999):04d}",
                "added_at": self.ts(r.randrange(400, 900)),
            }
            for kind in ("card", r.choice(("card", "bank")))
        ]
        self.rows["customers"].append(cust)
        self.rows["accounts"].append(acct)
        self.rows["payment_methods"] += methods
        for m in range(months, 0, -1):
            self.bill(acct, plan, methods, m)
        return {"customer": cust, "account": acct, "plan": plan, "methods": methods}

    def bill(
        self,
        acct: dict[str, Any],
        plan: tuple[str, str, int],
        methods: list[dict[str, Any]],
        m: int,
    ) -> None:
        r = self.r
        issued = self.now - (30 * m + r.randrange(0, 3)) * DAY
        inv = {
            "id": self.id("IN"),
            "account_id": acct["id"],
            "period": iso(issued)[:7],
            "issued_at": iso(issued),
            "total_cents": plan[2],
            "status": "paid",
        }
        self.rows["invoices"].append(inv)
        self.rows["invoice_lines"].append(
            {
                "id": self.id("IL"),
                "invoice_id": inv["id"],
                "description": f"{plan[1]} plan",
                "amount_cents": plan[2],
            }
        )
        method = methods[0] if r.random() < 0.8 else methods[1]
        self.pay(acct, inv, method, issued + DAY + r.randrange(0, 6 * 3600))

    def pay(
        self, acct: dict[str, Any], inv: dict[str, Any], method: dict[str, Any], at: int
    ) -> dict[str, Any]:
        pay = {
            "id": self.id("PY"),
            "account_id": acct["id"],
            "invoice_id": inv["id"],
            "method_id": method["id"],
            "amount_cents": inv["total_cents"],
            "charged_at": iso(at),
            "status": "settled",
        }
        self.rows["payments"].append(pay)
        return pay

    def addon(
        self, acct: dict[str, Any], method: dict[str, Any], days_ago: int, item: tuple[str, int]
    ) -> dict[str, Any]:
        at = int(self.now - days_ago * DAY - self.r.randrange(0, 8) * 3600)
        inv = {
            "id": self.id("IN"),
            "account_id": acct["id"],
            "period": "one-time",
            "issued_at": iso(at),
            "total_cents": item[1],
            "status": "paid",
        }
        self.rows["invoices"].append(inv)
        self.rows["invoice_lines"].append(
            {
                "id": self.id("IL"),
                "invoice_id": inv["id"],
                "description": item[0],
                "amount_cents": item[1],
            }
        )
        return self.pay(acct, inv, method, at + 120)

    def credit(self, acct: dict[str, Any], case_id: str, amount: int, days_ago: int) -> None:
        self.rows["credits"].append(
            {
                "id": self.id("CR"),
                "case_id": case_id,
                "account_id": acct["id"],
                "amount_cents": amount,
                "kind": "goodwill",
                "reason": "service disruption",
                "created_at": self.ts(days_ago),
            }
        )

    # ---- issues -------------------------------------------------------------------------
    def issue(self, kind: str, who: dict[str, Any]) -> Issue:
        """Add one issue's rows and return its truth (expected effect and outcome code)."""
        r, acct, methods = self.r, who["account"], who["methods"]
        if kind == "duplicate":
            monthly = {i["id"]: i for i in self.rows["invoices"] if i["period"] != "one-time"}
            first = max(
                (
                    p
                    for p in self.rows["payments"]
                    if p["invoice_id"] in monthly and p["account_id"] == acct["id"]
                ),
                key=lambda p: p["charged_at"],
            )
            inv = monthly[first["invoice_id"]]
            method = next(m for m in methods if m["id"] == first["method_id"])
            dup = self.pay(acct, inv, method, epoch(first["charged_at"]) + r.randrange(120, 2400))
            month = MONTHS.split()[int(inv["period"][5:7]) - 1]
            return Issue(
                kind=kind,
                ask=f"I was charged twice for my {month} bill.",
                code="duplicate_refunded",
                payment_id=dup["id"],
                refund=Refund(
                    payment_id=dup["id"],
                    method_id=method["id"],
                    amount_cents=dup["amount_cents"],
                ),
            )
        if kind == "refund":
            inside = bool(self.p.get("inside", 1))
            days = (
                r.randrange(3, P.REFUND_WINDOW_DAYS - 4)
                if inside
                else r.randrange(P.REFUND_WINDOW_DAYS + 12, 200)
            )
            item = r.choice(ADDONS)
            if self.p["distractors"] >= 2:  # another add-on bought at another time
                other = r.choice([a for a in ADDONS if a != item])
                self.addon(acct, methods[0], r.randrange(5, 150), other)
            pay = self.addon(acct, methods[1], days, item)
            self.slots.append(
                SlotTruth(
                    name="charge",
                    value=pay["charged_at"][:10],
                    keywords=["which charge", "what charge", "amount and date", "date and amount"],
                    say=f"It was the {money(item[1])} charge for {item[0]} "
                    f"on {pay['charged_at'][:10]}.",
                )
            )
            ask = "I'd like a refund for a charge on my account."
            if not inside:
                return Issue(kind=kind, ask=ask, code="refund_denied_window", payment_id=pay["id"])
            refund = Refund(payment_id=pay["id"], method_id=methods[1]["id"], amount_cents=item[1])
            return Issue(
                kind=kind, ask=ask, code="refund_issued", payment_id=pay["id"], refund=refund
            )
        amount = (
            r.randrange(10, P.GOODWILL_LIMIT_CENTS // 100 + 1) * 100
            if kind == "goodwill"
            else r.randrange(P.GOODWILL_LIMIT_CENTS // 100 + 5, 260) * 100
        )
        recent = kind == "goodwill" and bool(self.p.get("recent", 0))
        if recent:
            self.credit(
                acct,
                self.id("CS"),
                r.randrange(10, 40) * 100,
                r.randrange(30, P.GOODWILL_PERIOD_DAYS - 20),
            )
        elif r.random() < 0.5:  # an old credit, outside the period: no obstacle
            self.credit(
                acct,
                self.id("CS"),
                r.randrange(10, 40) * 100,
                r.randrange(P.GOODWILL_PERIOD_DAYS + 30, 900),
            )
        ask = f"My service was down for days last week. I'd like a {money(amount)} credit."
        if kind == "over_limit":
            escalation = Escalation(team="billing_supervisor", amount_cents=amount)
            return Issue(
                kind=kind,
                ask=ask,
                code="escalated_over_limit",
                amount_cents=amount,
                escalation=escalation,
            )
        if recent:
            return Issue(kind=kind, ask=ask, code="goodwill_declined_recent", amount_cents=amount)
        credit = Credit(account_id=acct["id"], amount_cents=amount, kind="goodwill")
        return Issue(
            kind=kind, ask=ask, code="goodwill_credited", amount_cents=amount, credit=credit
        )


def build_scenario(
    kinds: list[str],
    params: dict[str, Any],
    r: random.Random,
    *,
    fraud: bool = False,
    wrong: str | None = None,
    outage: bool = False,
) -> tuple[str, DeskTruth]:
    """The opening message and hidden truth for a customer raising ``kinds`` issues.
    ``fraud``: the account is on hold; ``wrong``: the caller gives a wrong ``zip``/``email``;
    ``outage``: the task forces tool faults."""
    s = Scenario(params, r)
    for _ in range(params["distractors"]):  # other customers, never relevant
        s.customer(r.choice(("na", "eu", "apac")), False, months=2)
    who = s.customer(params["region"], fraud, months=3 + params["distractors"])
    cust, acct = who["customer"], who["account"]
    case_id = s.id("CS")
    issues = [s.issue(k, who) for k in kinds]
    tone: Tone = r.choice(("polite", "terse", "upset"))
    s.rows["cases"].append(
        {
            "id": case_id,
            "customer_id": cust["id"],
            "subject": "; ".join(i["kind"].replace("_", " ") for i in issues),
            "channel": r.choice(("chat", "email", "phone")),
            "status": "open",
            "outcome_codes": "",
            "opened_at": s.ts(r.randrange(2, 30) / 1440),
            "closed_at": None,
            "version": 1,
        }
    )
    s.rows["plans"] = [{"id": p[0], "name": p[1], "monthly_cents": p[2]} for p in PLANS]
    email, zip_code = cust["email"], cust["zip"]
    if wrong == "zip":
        zip_code = _zip(cust["region"], r)
        while zip_code == cust["zip"]:
            zip_code = _zip(cust["region"], r)
    elif wrong == "email":
        first = r.choice([f for f in FIRST if f != cust["name"].split()[0]])
        email = f"{first.lower()}.{cust['name'].split()[1].lower()}@mail.example"
    slots = [
        SlotTruth(
            name="email", value=email, keywords=["email", "e-mail"], say=f"My email is {email}."
        ),
        SlotTruth(
            name="zip",
            value=zip_code,
            keywords=["zip", "postal", "postcode"],
            say=f"My ZIP code is {zip_code}.",
        ),
        *s.slots,
    ]
    greeting = {"polite": "Hello, this is", "terse": "Hi, it's", "upset": "This is"}[tone]
    ask = " Also, ".join(i["ask"] for i in issues)
    opening = f"{greeting} {cust['name']}. {ask}"
    if fraud:
        codes = ["fraud_hold_no_action"]
    elif wrong:
        codes = ["identity_not_verified"]
    else:
        codes = sorted(i["code"] for i in issues)
    ordered = sorted(
        (p for p in s.rows["payments"] if p["account_id"] == acct["id"]),
        key=lambda p: (p["charged_at"], p["id"]),
        reverse=True,
    )
    index = {p["id"]: i for i, p in enumerate(ordered)}
    pages = max(
        (page_of(index[p], params["page_size"]) for i in issues if (p := i.get("payment_id"))),
        default=0,
    )
    # trusted: every value is one this function made, of its declared type, each row in its
    # TypedDict's key order (tests/tasks/test_trusted_truth.py validates every one)
    truth = trusted(
        DeskTruth,
        world=dict(s.rows),
        now=iso(s.now),
        case_id=case_id,
        customer_id=cust["id"],
        account_id=acct["id"],
        identity=Identity(email=email, zip=zip_code, valid=wrong is None),
        fraud=fraud,
        issues=issues,
        codes=codes,
        payment_pages=pages,
        page_size=params["page_size"],
        persona=trusted(
            PersonaTruth, name=cust["name"], tone=tone, opening=opening, nudge=ask, slots=slots
        ),
        outage=outage,
    )
    return f"[Case {case_id}] {opening}", truth
