"""The CRM's written rules: the system prompt, and how the verifier enforces them.

The tools behave like a permissive CRM: they refuse what a real one refuses (unknown ids,
stage names or fields, merged records, a merge across accounts that do not share a domain)
and otherwise let the agent break policy, which the verifier catches two ways:

- ``PROCESS_RULES`` over the action log, each checked at the step where it could break
  (moving a stage while its required fields are empty is a violation even if they are
  filled afterwards): read before write, search before create, allowed transitions,
  required fields, data ownership, clarify before acting on an ambiguous request, no
  needless question on a clear one, idempotency keys, no resubmission;
- ``policy_checks`` over the final state: changed opportunities sit in a stage whose
  fields are filled, no other team's record changed, no duplicate contact or account was
  made (created, or edited into one), a merge kept the older record.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Sequence

from gymforge.envs.crm.pipeline import REQUIRED, STAGES, allowed, missing
from gymforge.verify.rules import Match, Never, RequiresPrior, Rule
from gymforge.world.db import Diff, WorldDB
from gymforge.world.verify import Finding
from gymforge.world.writes import WRITE_RULES

WRITE_TOOLS = frozenset(
    {
        "create_contact",
        "update_record",
        "merge_records",
        "log_activity",
        "move_stage",
        "request_change",
    }
)
READ_TOOLS = frozenset({"search", "get_record", "get_pipeline"})
OWNED = ("accounts", "contacts", "opportunities", "activities")

_REQ = "; ".join(f"{s}: {', '.join(f) or 'nothing'}" for s, f in REQUIRED.items())
SYSTEM_PROMPT = f"""\
You are a sales-operations assistant working in the company CRM for the team named in the \
request. A colleague (the requester) asks for a change in plain language; make it with the \
tools, then reply with a one-line summary. Rules:
1. Read before you write: open a record with get_record before changing it (for a new \
contact or an activity, open its account).
2. No duplicates: before creating a contact, search the contacts for their email. If the \
person already exists, update that record instead of creating another.
3. Pipeline: move an opportunity with move_stage only along allowed transitions (one stage \
forward or back; closed_won only from negotiation; closed_lost from any open stage; closed \
stages are final), and only once the fields the new stage requires are filled ({_REQ}). \
Use get_pipeline to read the stages and rules.
4. Merging: a duplicate account shares its domain with the original; merge with \
merge_records, keeping the older record (the earlier created_at) as the survivor.
5. Data ownership: you may change only records your team owns (team_id). For another \
team's record, never edit it: file request_change with what should change.
6. If the request could mean more than one record, or leaves out a value you need, ask the \
requester with ask_requester before changing anything. Do not ask when the request is \
clear: a needless question counts against you.
7. Every write takes an idempotency_key: a fresh one per intended change, reused only to \
retry that change after an error. Never resubmit a write that already succeeded."""

WRITE = Match("tool.*", where={"effect": True, "writes": True})

PROCESS_RULES: tuple[Rule, ...] = (
    RequiresPrior(
        WRITE,
        Match("tool.get_record", where={"ok": True}),
        same=("record",),
        name="read_before_write",
    ),
    RequiresPrior(
        Match("tool.create_contact", where={"effect": True}),
        Match("tool.search", where={"ok": True, "kind": "contacts"}),
        name="search_before_create",
    ),
    Never(Match("tool.move_stage", where={"effect": True, "allowed": False}), "allowed_transition"),
    Never(Match("tool.move_stage", where={"effect": True, "complete": False}), "required_fields"),
    Never(Match("tool.*", where={"effect": True, "foreign": True}), "data_ownership"),
    RequiresPrior(
        Match("tool.*", where={"effect": True, "target": True}),
        Match("tool.ask_requester", where={"revealed": True}),
        name="clarify_before_acting",
    ),
    Never(Match("tool.ask_requester", where={"needless": True}), "no_needless_question"),
    *WRITE_RULES,
)


def policy_checks(db: WorldDB, diff: Diff, team: str) -> list[Finding]:
    """Policy facts of the final state, independent of what the task expected."""
    out: list[Finding] = []

    def bad(rule: str, message: str) -> None:
        out.append(Finding("policy", message, rule=rule))

    changed_opps = [r for r in diff["opportunities"].added] + [
        after for _, after in diff["opportunities"].updated
    ]
    for opp in changed_opps:
        if opp["stage"] not in STAGES:
            bad("required_fields", f"{opp['id']} is in unknown stage {opp['stage']!r}")
        elif gaps := missing(opp, opp["stage"]):
            bad("required_fields", f"{opp['id']} is in {opp['stage']} without {gaps}")
    for table in OWNED:
        d = diff[table]
        for row in [*d.added, *(a for _, a in d.updated), *d.removed]:
            owner = _team_of(db, table, row)
            if owner is not None and owner != team:
                bad("data_ownership", f"{table} {row['id']} belongs to team {owner}")
    for table, key in (("contacts", "email"), ("accounts", "domain")):
        d = diff[table]
        # a created record, or an edit that gives a record another's e-mail or domain
        fresh = [*d.added, *(a for b, a in d.updated if a[key] != b[key])]
        for row in fresh:
            twins = db.scalar(
                f"SELECT COUNT(*) FROM {table} WHERE lower({key}) = lower(?) "
                "AND status = 'active' AND id != ?",
                row[key],
                row["id"],
            )
            if twins and row["status"] == "active":
                bad("no_duplicates", f"{table}: {row[key]} is on another active record")
    for before, after in diff["accounts"].updated:
        if after["status"] == "merged" and before["status"] != "merged":
            keep = db.get("accounts", after["merged_into"])
            if keep is not None and keep["created_at"] > after["created_at"]:
                bad("merge_survivor", f"{after['id']} (older) was merged into {keep['id']}")
    return out


def _team_of(db: WorldDB, table: str, row: dict[str, object]) -> str | None:
    if table == "opportunities" or table == "accounts":
        return str(row["team_id"])
    acct = db.get("accounts", row["account_id"])
    return None if acct is None else str(acct["team_id"])


def transition_facts(src: str, dst: str, row: dict[str, object]) -> dict[str, object]:
    """What a ``move_stage`` call notes for the process rules."""
    return {"from": src, "to": dst, "allowed": allowed(src, dst), "complete": not missing(row, dst)}


def amount_spellings(cents: int) -> list[str]:
    """The ways a change request may state an amount: cents, or dollars with or without
    thousands separators and cents."""
    d = cents / 100
    return sorted({str(cents), f"{d:.2f}", f"{d:,.2f}", f"{cents // 100}", f"{cents // 100:,}"})


NUMBER = re.compile(r"(?<![\w.,-])\d+(?:,\d{3})*(?:\.\d+)?(?![\w-]|[.,]\d)")
"""A number standing on its own: not part of an id (``OP-1234``), a date or a word."""
SPACED = re.compile(r"(?<![\w.,-])\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?![\w-]|[.,]\d)")
"""A number grouped with spaces ("18 000", a no-break space too): read as the one number it
writes, never as the plain counts 18 and 000."""
NO_AMOUNT = re.compile(r"\d{4}-\d{2}-\d{2}|(?<!\w)\d{1,2}(?:st|nd|rd|th)\b", re.I)
"""Digits that state no amount: a date, a small ordinal (2nd)."""
ID_SHAPED = re.compile(r"[^\W\d_]+-\d+")
"""A word, a hyphen and digits: a record id (``OP-1234``, ``U-11``) when the world holds
such a record, else digits like any ("USD-18000", "or-18000")."""
_DIGITS = re.compile(r"\d+")


SCALED = re.compile(
    r"(?<![\w.,-])(\d+)[\s*_`~'\"\u2018\u2019\u201c\u201d]*(?:(?:k|hundred|thousand|thou|grand"
    r"|large|lakh|lac|crore|m|mn|mil|mio|million|bn|billion|tn|trillion)s?(?-i:[A-Z]{3})?"
    r"(?![^\W_])|[x\u00d7*]\s*10\s*(?:\^|\*\*))",
    re.I,
)
"""A count with a scale after it ("18 thousand", "18 k", "18 thousands", "18 mil", "18
kUSD", "18 x 10^3", "18 hundred"), set apart by whitespace or the marks of emphasis and
quotes ("18 **thousand**", "18 _k_"): an amount, never a count."""


def plain_text(text: str) -> str:
    """``text`` as a reader sees it: compatibility forms folded (fullwidth "\uff11\uff18 \uff4b" is
    "18 k") and invisible format characters dropped (a zero-width space, a soft hyphen, a word
    joiner: "18\u200bthousand" reads "18thousand"), HTML character references read as the
    characters they name ("18&nbsp;thousand")."""
    folded = unicodedata.normalize("NFKC", html.unescape(text))
    return "".join(c for c in folded if unicodedata.category(c) != "Cf")


CLOCK = re.compile(
    r"(?<![\d.,:/])(?:\d{1,2}(?::\d{2}){1,2}|\d{1,2}/\d{1,2}(?:/\d{4}|/\d{2})?)(?![\d:/]|[.,]\d)"
)
"""A clock time (09:30) or a day and month (01/05, 28/04/2025), a sentence's mark after it
or not: no amount."""


def _small_count(number: str) -> bool:
    """A plain number under 100 ("2 emails", "within 5 days"): no amount a deal is for.
    Written without a leading zero: "000" or "05" is a group of a larger number ("18'000",
    "18\u2009000", "18/000": two numbers to the number pattern)."""
    return number.isdigit() and int(number) < 100 and number == str(int(number))


def _unless_record(db: WorldDB, match: re.Match[str]) -> str:
    """A blank for the id of a record the world holds (digits that state no amount), else
    the id-shaped text as it is: its digits are another amount."""
    token = match.group()
    held = any(db.get(t.name, token) is not None for t in db.schema.tables)
    return " " if held else token


def change_findings(db: WorldDB, diff: Diff, mentions: Sequence[str]) -> list[Finding]:
    """``outcome`` findings for change requests that do not state the amount: each must
    state it (a spelling of ``mentions``, as a whole number, never as part of a larger
    one) and no other number but the record's current amount and plain counts under 100,
    so that neither a wrong amount that contains the right one ("$117,000" for 17,000) nor
    a list of candidates passes, however its other amounts are written ("18k", "18 000",
    "1.8e4", "18 thousand", "USD-18000": any digits but the id of a record the world holds,
    a date's, a small ordinal's or a plain count's). Amounts in words ("eighteen thousand")
    are not read."""
    out = []
    for req in diff["change_requests"].added:
        change = plain_text(str(req["change"]))
        text = SPACED.sub(lambda m: re.sub(r"\D", "", m.group()), CLOCK.sub(" ", change))
        said = set(NUMBER.findall(text))
        record = db.get("opportunities", req["record_id"]) or {}
        current = record.get("amount_cents")
        known = set(mentions) | set(amount_spellings(current) if current else ())
        others = {n for n in said - known if not _small_count(n)} | set(SCALED.findall(text))
        # digits no number above holds: an amount with a scale or currency glued on (18k,
        # $18.5K, USD18k, 18,500USD) or in exponent form (1.8e4), beside the right one
        rest = NO_AMOUNT.sub(" ", NUMBER.sub(" ", text))
        others |= set(_DIGITS.findall(ID_SHAPED.sub(lambda m: _unless_record(db, m), rest)))
        if not said & set(mentions) or others:
            out.append(
                Finding(
                    "outcome",
                    f"change request {req['id']} does not state the amount (and only it): "
                    f"states {sorted(said)[:5]}",
                )
            )
    return out
