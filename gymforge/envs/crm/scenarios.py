"""CRM scenarios: what the requester asks, what they meant, and what a correct agent does.

Each ``build_*`` takes the seed world (with its distractors), the task's knobs and ``r``,
and fills a ``Plan``: the request as the requester words it (vaguely when ``ambiguous``),
the hidden intent a clarifying question reveals, the oracle's calls and the rows a correct
agent adds and updates. Everything is drawn from ``r``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from gymforge.envs.crm.pipeline import LOSS_REASONS, STAGES, missing, path
from gymforge.envs.crm.policy import amount_spellings
from gymforge.envs.crm.seed import TITLES, Row, SeedWorld
from gymforge.envs.crm.truth import Clarification, PlannedCall
from gymforge.world.clock import iso
from gymforge.world.render import money

WHICH = ["which", "who", "mean", "full name", "last name", "specify", "clarify"]
DEAL_WORDS = ["which", "opportunit", "deal", "mean", "specify", "clarify"]
EMAIL_WORDS = ["email", "e-mail", "address", "how can", "reach"]
RECORD_ARGS = ("record_id", "opportunity_id", "survivor_id", "account_id")
"""Where a write's arguments name the record to read back, in order of preference."""
QUESTION = {
    "contact": "There is more than one contact with that name. Which one do you mean?",
    "opportunity": "That account has more than one open opportunity. Which deal do you mean?",
    "email": "What is their email address?",
}


@dataclass
class Plan:
    """A scenario being built: see the module docstring."""

    w: SeedWorld
    request: str = ""
    clarify: list[Clarification] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)
    decoys: dict[str, str] = field(default_factory=dict)
    calls: list[PlannedCall] = field(default_factory=list)
    summary: str = ""
    mentions: list[str] = field(default_factory=list)
    added: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    updated: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    _keys: int = 0

    def call(self, tool: str, **args: Any) -> None:
        self.calls.append(PlannedCall(tool=tool, args=args))

    def write(self, tool: str, **args: Any) -> None:
        self._keys += 1
        self.call(tool, **args, idempotency_key=f"crm-{self._keys}-{tool}")

    def read_back(self) -> None:
        """End with a read of what the last write changed, as a careful agent checks its
        work (where a stale read shows the record as it was before the write)."""
        last = self.calls[-1]
        record = next(
            (last.args[k] for k in RECORD_ARGS if k in last.args),
            None,
        )
        if "idempotency_key" in last.args and isinstance(record, str):
            self.call("get_record", record_id=record)

    def ask(self, name: str, value: str, keywords: list[str], say: str) -> None:
        self.clarify.append(Clarification(name=name, value=value, keywords=keywords, say=say))
        self.call("ask_requester", question=QUESTION[name])

    def add(self, table: str, row: dict[str, Any]) -> None:
        self.added.setdefault(table, []).append(row)

    def update(self, table: str, pk: str, **values: Any) -> None:
        self.updated.setdefault(table, {}).setdefault(pk, {}).update(values)


def _full(c: Row) -> str:
    return f"{c['first_name']} {c['last_name']}"


def _namesake(p: Plan, account: Row, ambiguous: bool) -> Row:
    """The contact the request is about; when ambiguous, a second contact of the account
    shares their first name, and the meant one is revealed only on asking."""
    w = p.w
    meant = w.contact(account)
    if ambiguous:
        twin = w.contact(account, first=meant["first_name"])
        if w.r.random() < 0.5:  # the meant one is not always listed first (lists go by id)
            meant["id"], twin["id"] = twin["id"], meant["id"]
        p.targets += [meant["id"], twin["id"]]
        p.decoys[meant["id"]] = twin["id"]
    return meant


def _ask_contact(p: Plan, meant: Row) -> None:
    p.ask("contact", _full(meant), WHICH, f"I mean {_full(meant)}, the {meant['title']}.")


def build_update_contact(p: Plan, params: dict[str, Any], r: random.Random) -> None:
    w, amb = p.w, bool(params["ambiguous"])
    acct = w.account()
    w.filler(acct, r.randrange(0, 2), r.randrange(0, 2))
    meant = _namesake(p, acct, amb)
    who = meant["first_name"] if amb else _full(meant)
    if r.random() < 0.5:
        value = w.phone()
        p.request = f"Please update {who}'s phone number at {acct['name']} to {value}."
        change = {"phone": value}
    else:
        value = r.choice([t for t in TITLES if t != meant["title"]])
        p.request = f"{who} at {acct['name']} has a new role: {value}. Please update the CRM."
        change = {"title": value}
    p.call("search", query=acct["name"], kind="accounts")
    p.call("get_record", record_id=acct["id"])
    if amb:
        _ask_contact(p, meant)
    p.call("get_record", record_id=meant["id"])
    p.write("update_record", record_id=meant["id"], changes=change)
    p.update("contacts", meant["id"], **change)
    p.summary = f"Updated {_full(meant)} ({meant['id']})."


def build_log_activity(p: Plan, params: dict[str, Any], r: random.Random) -> None:
    w, amb = p.w, bool(params["ambiguous"])
    acct = w.account()
    w.filler(acct, r.randrange(0, 2), 0)
    meant = _namesake(p, acct, amb)
    deal = (
        w.opportunity(acct, r.choice(("qualification", "proposal"))) if r.random() < 0.5 else None
    )
    kind = r.choice(("call", "email", "meeting"))
    subject = r.choice(("Pricing follow-up", "Contract questions", "Demo recap", "Budget check"))
    who = meant["first_name"] if amb else _full(meant)
    article = "an" if kind == "email" else "a"
    p.request = f'Log {article} {kind} with {who} at {acct["name"]}, subject "{subject}"'
    p.request += f", for the {deal['name']} deal." if deal else "."
    p.call("search", query=acct["name"], kind="accounts")
    p.call("get_record", record_id=acct["id"])
    if amb:
        _ask_contact(p, meant)
    row = {
        "kind": kind,
        "subject": subject,
        "account_id": acct["id"],
        "contact_id": meant["id"],
        "opportunity_id": deal["id"] if deal else "",
    }
    p.write("log_activity", **row)
    p.add("activities", {**row, "opportunity_id": row["opportunity_id"] or None})
    p.summary = f"Logged the {kind} with {_full(meant)}."


def _deal(p: Plan, acct: Row, stage: str, ambiguous: bool) -> Row:
    """The opportunity the request is about, and its same-stage look-alike when ambiguous."""
    w = p.w
    meant = w.opportunity(acct, stage)
    if ambiguous:
        twin = w.opportunity(acct, stage)
        p.targets += [meant["id"], twin["id"]]
        p.decoys[meant["id"]] = twin["id"]
    return meant


def _fill_and_move(p: Plan, deal: Row, dst: str, given: dict[str, Any]) -> None:
    """Set the fields the walk to ``dst`` needs (one update, before the first move), then
    move one allowed step at a time, recording the expected history."""
    if given:
        p.write("update_record", record_id=deal["id"], changes=given)
    src = deal["stage"]
    for stage in path(src, dst):
        p.write("move_stage", opportunity_id=deal["id"], to_stage=stage)
        p.add("stage_history", {"opportunity_id": deal["id"], "from_stage": src, "to_stage": stage})
        src = stage
    p.update("opportunities", deal["id"], stage=dst, **given)


def _deal_request(p: Plan, deal: Row, acct: Row, amb: bool) -> str:
    return f"the {acct['name']} deal" if amb else deal["name"]


def _needs(p: Plan, deal: Row, dst: str, contact: Row) -> tuple[dict[str, Any], list[str]]:
    """The values the walk to ``dst`` still needs, and how the request states them."""
    w, given, said = p.w, {}, []
    stages = path(deal["stage"], dst)
    need = {f for s in stages for f in missing(deal, s)}
    if "contact_id" in need:
        given["contact_id"] = contact["id"]
        said.append(f"the main contact is {_full(contact)}")
    if "amount_cents" in need:
        given["amount_cents"] = w.amount()
        said.append(f"the amount is {money(given['amount_cents'])}")
    if "close_date" in need:
        given["close_date"] = w.future_date()
        said.append(f"expected close {given['close_date']}")
    return given, said


def _deal_prelude(p: Plan, acct: Row, deal: Row, amb: bool) -> None:
    p.call("get_pipeline")
    p.call("search", query=acct["name"], kind="opportunities")
    if amb:
        p.ask("opportunity", deal["name"], DEAL_WORDS, f"The {deal['name']} one.")
    p.call("get_record", record_id=deal["id"])


def build_advance_stage(p: Plan, params: dict[str, Any], r: random.Random) -> None:
    w, amb = p.w, bool(params["ambiguous"])
    acct = w.account()
    people = [w.contact(acct) for _ in range(1 + int(r.random() * 2))]
    src = r.choice(STAGES[: 4 - params["stages"]])
    dst = STAGES[STAGES.index(src) + params["stages"]]
    deal = _deal(p, acct, src, amb)
    given, said = _needs(p, deal, dst, r.choice(people))
    p.request = f"Please move {_deal_request(p, deal, acct, amb)} to {dst}"
    p.request += (": " + "; ".join(said) + ".") if said else "."
    _deal_prelude(p, acct, deal, amb)
    _fill_and_move(p, deal, dst, given)
    p.summary = f"{deal['name']} is now in {dst}."


def build_close_deal(p: Plan, params: dict[str, Any], r: random.Random) -> None:
    w, amb = p.w, bool(params["ambiguous"])
    acct = w.account()
    people = [w.contact(acct) for _ in range(1 + int(r.random() * 2))]
    deal = _deal(p, acct, r.choice(("proposal", "negotiation")), amb)
    what = _deal_request(p, deal, acct, amb)
    if params["outcome"] == "won":
        given, said = _needs(p, deal, "closed_won", r.choice(people))
        amount = w.amount()
        today = iso(w.now)[:10]
        given.update(amount_cents=amount, close_date=today)
        said = [s for s in said if not s.startswith(("the amount", "expected close"))]
        p.request = f"Great news: we won {what}! It was signed today ({today}) for "
        p.request += f"{money(amount)}" + ("; " + "; ".join(said) + "." if said else ".")
        dst = "closed_won"
    else:
        reason = r.choice(LOSS_REASONS)
        given = {"loss_reason": reason}
        p.request = f"We lost {what}. Please close it out; the reason was {reason}."
        dst = "closed_lost"
    _deal_prelude(p, acct, deal, amb)
    _fill_and_move(p, deal, dst, given)
    p.summary = f"{deal['name']} is closed ({dst})."


def build_create_contact(p: Plan, params: dict[str, Any], r: random.Random) -> None:
    w, amb = p.w, bool(params["ambiguous"])
    acct = w.account()
    w.filler(acct, r.randrange(1, 3), r.randrange(0, 2))
    title = r.choice(TITLES)
    if params["exists"]:
        person = w.contact(acct)
        title = r.choice([t for t in TITLES if t != person["title"]])
    else:  # drawn like a contact, then taken back out of the world
        person = w.contact(acct)
        w.forget(person)
    name, email = _full(person), person["email"]
    p.request = (
        f"Please add {name}, {title}, as a contact at {acct['name']}."
        if amb
        else f"Please add {name} ({email}), {title}, as a contact at {acct['name']}."
    )
    p.call("search", query=name if amb else email, kind="contacts")
    p.call("get_record", record_id=acct["id"])
    if amb:
        p.ask("email", email, EMAIL_WORDS, f"Their email is {email}.")
        p.targets.append(acct["id"])
        p.call("search", query=email, kind="contacts")
    if params["exists"]:
        if amb:
            p.targets.append(person["id"])
        p.call("get_record", record_id=person["id"])
        p.write("update_record", record_id=person["id"], changes={"title": title})
        p.update("contacts", person["id"], title=title)
        p.summary = f"{name} was already a contact ({person['id']}); updated the title."
        return
    row = {
        "account_id": acct["id"],
        "first_name": person["first_name"],
        "last_name": person["last_name"],
        "email": email,
        "title": title,
    }
    p.write("create_contact", **row)
    p.add("contacts", {**row, "status": "active"})
    p.summary = f"Added {name} at {acct['name']}."


def build_merge_accounts(p: Plan, params: dict[str, Any], r: random.Random) -> None:
    w = p.w
    base = w.fresh_name()
    keep = w.account(base=base)
    w.filler(keep, r.randrange(1, 3), r.randrange(0, 2))
    dup = w.account(base=base, created_at=w.past(5, 60))
    dup["name"] = r.choice((base.upper(), base + " (new)", base)) + " " + keep["name"].split()[-1]
    dup["updated_at"] = dup["created_at"]
    if dup["name"] == keep["name"]:
        dup["name"] += "."
    # a look-alike that is not a duplicate: another team's regional office
    w.account(w.other_team(), base=base, domain=base.lower().replace(" ", "") + ".eu")
    people = [w.contact(dup) for _ in range(r.randrange(1, 3))]
    for _ in range(r.randrange(0, 2)):
        w.opportunity(dup)
    if r.random() < 0.6:
        w.activity(dup, people[0])
    named = keep["name"] if r.random() < 0.5 else dup["name"]  # either record, by name
    p.request = f"{named} seems to be in the CRM twice. Please merge the duplicate records."
    p.call("search", query=keep["domain"], kind="accounts")
    p.call("get_record", record_id=keep["id"])
    p.call("get_record", record_id=dup["id"])
    p.write("merge_records", survivor_id=keep["id"], duplicate_id=dup["id"])
    p.update("accounts", dup["id"], status="merged", merged_into=keep["id"])
    for table in ("contacts", "opportunities", "activities"):
        for row in getattr(w, table):
            if row["account_id"] == dup["id"]:
                p.update(table, row["id"], account_id=keep["id"])
    p.summary = f"Merged {dup['id']} into {keep['id']}."


def build_cross_team(p: Plan, params: dict[str, Any], r: random.Random) -> None:
    w = p.w
    acct = w.account(w.other_team())
    w.contact(acct)
    deal = w.opportunity(acct, r.choice(("qualification", "proposal", "negotiation")))
    amount = w.amount()
    p.request = f"Please set the amount on {deal['name']} to {money(amount)}."
    p.call("search", query=deal["name"], kind="opportunities")
    p.call("get_record", record_id=deal["id"])
    change = f"Please set amount_cents to {amount} ({money(amount)})."
    p.write("request_change", record_id=deal["id"], change=change)
    p.add("change_requests", {"record_id": deal["id"], "team_id": deal["team_id"]})
    p.mentions = amount_spellings(amount)
    p.summary = f"{deal['name']} belongs to another team; I filed a change request with them."


BUILDERS = {
    "update_contact": build_update_contact,
    "log_activity": build_log_activity,
    "advance_stage": build_advance_stage,
    "create_contact": build_create_contact,
    "merge_accounts": build_merge_accounts,
    "cross_team": build_cross_team,
    "close_deal": build_close_deal,
}
