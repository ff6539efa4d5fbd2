"""Verifying a world episode on its final state (AppWorld-style), plus the verdict.

- the expected rows changed: added rows match the expected ones on the listed columns, as a
  multiset; the expected rows were updated to the expected values; nothing was removed;
- the set of changed tables equals the expected set, so collateral damage fails;
- an episode that changed nothing fails (``no_change``) whatever else holds;
- domain policy checks over the diff and process rules over the action log come in as
  ``Finding``s too, so one verdict lists every reason an episode failed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gymforge.core.seeding import canonical_json
from gymforge.core.verdict import Verdict
from gymforge.verify.rules import Violation
from gymforge.world.db import Diff, TableDiff

ORDER = ("no_change", "collateral", "missing_change", "wrong_rows", "policy", "process", "outcome")


@dataclass(frozen=True)
class Expect:
    """What a correct episode changes. ``added``: table -> rows (only the keys given are
    compared); ``updated``: table -> primary key -> expected column values; ``touched``:
    tables that must change but whose rows are not checked (an audit log)."""

    added: Mapping[str, Sequence[Mapping[str, Any]]] = field(default_factory=dict)
    updated: Mapping[str, Mapping[Any, Mapping[str, Any]]] = field(default_factory=dict)
    touched: frozenset[str] = frozenset()
    incidental: Mapping[str, frozenset[str]] | None = None
    """None: an expected update is compared on the columns it lists, and nothing else of
    the row is looked at. Given (table -> columns): an expected update may change only the
    columns it lists and its table's incidental ones (what the tools keep, such as
    ``updated_at``); any other changed column of that row is ``collateral``."""

    @property
    def tables(self) -> frozenset[str]:
        return (
            frozenset(t for t, rows in self.added.items() if rows)
            | frozenset(t for t, rows in self.updated.items() if rows)
            | self.touched
        )


@dataclass(frozen=True)
class Finding:
    """One reason to fail: ``check`` is one of ``ORDER``."""

    check: str
    message: str
    rule: str | None = None
    step: int | None = None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"check": self.check, "message": self.message}
        if self.rule is not None:
            out["rule"] = self.rule
        if self.step is not None:
            out["step"] = self.step
        return out


def from_violations(violations: Iterable[Violation]) -> list[Finding]:
    return [Finding("process", v.message, v.rule, v.step) for v in violations]


def effect_findings(diff: Diff, expect: Expect) -> list[Finding]:
    """Compare the diff with the expected effects."""
    if not diff.changed_tables:
        return [Finding("no_change", "the world was not changed")]
    out: list[Finding] = []
    extra = sorted(diff.changed_tables - expect.tables)
    missing = sorted(expect.tables - diff.changed_tables)
    if extra:
        out.append(Finding("collateral", f"unexpected changes to tables {extra}"))
    if missing:
        out.append(Finding("missing_change", f"tables {missing} were not changed"))
    for name in sorted(diff.changed_tables):
        if diff[name].removed:
            out.append(Finding("collateral", f"{len(diff[name].removed)} rows removed from {name}"))
    # a table expected to change one way is still checked for the other: rows added to a
    # table the task only updates are wrong, updates to one it only adds to are collateral
    checked = (set(expect.added) | set(expect.updated) | set(diff.changed_tables)) - set(
        expect.touched
    )
    for name in sorted(checked):
        want_added = expect.added.get(name, ())
        if want_added or diff[name].added:
            out += _added(name, [dict(r) for r in diff[name].added], want_added)
        if name in expect.updated or diff[name].updated:
            out += _updated(name, diff[name], expect.updated.get(name, {}))
            if expect.incidental is not None:
                free = expect.incidental.get(name, frozenset())
                out += _extra_columns(name, diff[name], expect.updated.get(name, {}), free)
    return out


def stray_findings(
    diff: Diff, name: str, allowed: Callable[[Mapping[str, Any]], bool], limit: int = 8
) -> list[Finding]:
    """``collateral`` findings for rows of table ``name`` that were added, updated or removed
    although ``allowed(row)`` is false for them (an updated row is judged as it was before
    and after: both must be allowed). For worlds whose tasks allow edits to a region of a
    table (cells in a range, records of one owner) rather than to listed rows."""
    d = diff[name]
    stray = [r for r in d.added if not allowed(r)]
    stray += [a for b, a in d.updated if not (allowed(b) and allowed(a))]
    stray += [r for r in d.removed if not allowed(r)]
    if not stray:
        return []
    keys = sorted(str(r.get(d.pk)) for r in stray)
    more = f" and {len(keys) - limit} more" if len(keys) > limit else ""
    return [
        Finding("collateral", f"{name}: changes outside the allowed rows: {keys[:limit]}{more}")
    ]


def _project(row: Mapping[str, Any], keys: Sequence[str]) -> str:
    return canonical_json({k: row.get(k) for k in keys})


def _added(
    name: str, got: list[dict[str, Any]], want: Sequence[Mapping[str, Any]]
) -> list[Finding]:
    keys = sorted({k for r in want for k in r}) or sorted({k for r in got for k in r})
    have = Counter(_project(r, keys) for r in got)
    need = Counter(_project(r, keys) for r in want)
    out = []
    if need - have:
        out.append(
            Finding("missing_change", f"{name}: expected rows not added: {sorted(need - have)}")
        )
    if have - need:
        out.append(Finding("wrong_rows", f"{name}: unexpected rows added: {sorted(have - need)}"))
    return out


def _updated(name: str, got: TableDiff, want: Mapping[Any, Mapping[str, Any]]) -> list[Finding]:
    out = []
    by_pk = {after[got.pk]: after for _, after in got.updated}
    for pk, cols in sorted(want.items(), key=lambda kv: str(kv[0])):
        after = by_pk.get(pk)
        if after is None:
            out.append(Finding("missing_change", f"{name} {pk} was not updated"))
            continue
        bad = {c: after.get(c) for c, v in cols.items() if after.get(c) != v}
        if bad:
            out.append(Finding("wrong_rows", f"{name} {pk}: got {canonical_json(bad)}"))
    others = sorted(str(pk) for pk in by_pk if pk not in want)
    if others:
        out.append(Finding("collateral", f"{name}: unexpected updates to {others}"))
    return out


def _extra_columns(
    name: str, got: TableDiff, want: Mapping[Any, Mapping[str, Any]], free: frozenset[str]
) -> list[Finding]:
    """``collateral`` for columns of an expected update that changed although neither the
    expectation lists them nor they are ``free`` (a contact's e-mail overwritten in the
    update that was to change its phone)."""
    out = []
    for before, after in got.updated:
        cols = want.get(after[got.pk])
        if cols is None:
            continue  # an unexpected row: ``_updated`` reports it
        extra = sorted(c for c in after if after[c] != before.get(c) and c not in cols)
        extra = [c for c in extra if c not in free]
        if extra:
            out.append(
                Finding("collateral", f"{name} {after[got.pk]}: unexpected changes to {extra}")
            )
    return out


def verdict_of(
    findings: Sequence[Finding],
    *,
    verifier: str,
    facts: Mapping[str, Any],
    score: float | None = None,
) -> Verdict:
    """The verdict: passed iff no finding; ``reason`` is the first check in ``ORDER``."""
    ranked = sorted(findings, key=lambda f: ORDER.index(f.check))
    return Verdict(
        passed=not ranked,
        reason=ranked[0].check if ranked else None,
        score=score,
        verifier=verifier,
        facts={**facts, "findings": [f.as_json() for f in ranked[:20]]},
    )
