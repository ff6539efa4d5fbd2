"""Declarative process rules over an action log.

An action log is a sequence of events. Each event has the ``step`` where it happened, a
``name`` (``tool.issue_refund``, ``user.confirm``, ``agent.reply``...) and attributes
(``ok``, ``customer``, ``effect``...). A rule is a small declarative object checked over the
whole log; every violation names the rule and the step where it broke::

    rules = [
        RequiresPrior(Match("tool.*", where={"discloses": True}),
                      Match("tool.verify_identity", where={"verified": True}),
                      same=("customer",), name="identity_before_disclosure"),
        RequiresPrior(Match("tool.*", where={"effect": True}), Match("user.confirm"),
                      consume=True, name="confirm_before_write"),
        NeverAfter(Match("tool.*", where={"effect": True}), Match("tool.close_case"),
                   name="no_write_after_close"),
        AtMost(1, Match("tool.apply_credit", where={"effect": True}), same=("account",)),
    ]
    violations = check_rules(rules, events)

The templates follow the Declare process-mining language (precedence, not-succession,
absence, existence, response), named here for what they say. Rules depend only on the log,
so a verifier library can host them unchanged.
"""

from __future__ import annotations

import fnmatch
from abc import ABC, abstractmethod
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


class Event(Protocol):
    """What a rule reads from a log entry."""

    @property
    def step(self) -> int: ...

    @property
    def name(self) -> str: ...

    @property
    def attrs(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class LogEvent:
    """A concrete action-log entry."""

    step: int
    name: str
    attrs: Mapping[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {"step": self.step, "name": self.name, **dict(self.attrs)}


@dataclass(frozen=True)
class Match:
    """Selects events: ``name`` is a glob (``tool.*``), ``where`` attribute equalities (a
    tuple or frozenset value means "one of"), ``test`` an optional extra predicate."""

    name: str = "*"
    where: Mapping[str, Any] = field(default_factory=dict)
    test: Callable[[Event], bool] | None = None

    def __post_init__(self) -> None:
        # plain names and "prefix*" globs skip fnmatch: rules run over every logged event
        stem = self.name[:-1]
        simple = not any(c in stem for c in "*?[")
        kind = (
            "any" if self.name == "*" else "prefix" if simple and self.name.endswith("*") else None
        )
        if kind is None and not any(c in self.name for c in "*?["):
            kind = "exact"
        object.__setattr__(self, "_kind", kind)

    def _name_ok(self, name: str) -> bool:
        kind = self._kind  # type: ignore[attr-defined]
        if kind == "any":
            return True
        if kind == "prefix":
            return name.startswith(self.name[:-1])
        if kind == "exact":
            return name == self.name
        return fnmatch.fnmatchcase(name, self.name)

    def __call__(self, event: Event) -> bool:
        if not self._name_ok(event.name):
            return False
        for key, want in self.where.items():
            got = event.attrs.get(key)
            if isinstance(want, tuple | frozenset):
                if got not in want:
                    return False
            elif got != want:
                return False
        return self.test is None or bool(self.test(event))

    def describe(self) -> str:
        parts = [self.name] + [f"{k}={v}" for k, v in sorted(self.where.items())]
        return " ".join(parts) + (" (+test)" if self.test else "")


@dataclass(frozen=True)
class Violation:
    """One broken rule at one step."""

    rule: str
    step: int
    message: str

    def as_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "step": self.step, "message": self.message}


def _key(event: Event, same: Sequence[str]) -> tuple[Any, ...]:
    return tuple(event.attrs.get(k) for k in same)


def _scope(key: tuple[Any, ...], same: Sequence[str]) -> str:
    return (
        "" if not same else " for " + ", ".join(f"{k}={v}" for k, v in zip(same, key, strict=True))
    )


class Rule(ABC):
    """A declarative check over a whole log."""

    name: str

    @abstractmethod
    def check(self, events: Sequence[Event]) -> list[Violation]:
        """Every violation, in log order."""


@dataclass(frozen=True)
class RequiresPrior(Rule):
    """Every ``event`` needs an earlier ``prior`` with equal ``same`` attributes (Declare
    *precedence*). With ``consume``, each prior licenses only one event (*alternate
    precedence*): "one confirmation per write"."""

    event: Match
    prior: Match
    same: tuple[str, ...] = ()
    consume: bool = False
    name: str = "requires_prior"

    def check(self, events: Sequence[Event]) -> list[Violation]:
        credit: Counter[tuple[Any, ...]] = Counter()
        out = []
        for e in events:
            key = _key(e, self.same)
            if self.event(e):
                if credit[key] > 0:
                    if self.consume:
                        credit[key] -= 1
                else:
                    out.append(
                        Violation(
                            self.name,
                            e.step,
                            f"{e.name} without a prior {self.prior.describe()}"
                            + _scope(key, self.same),
                        )
                    )
            # an event may be its own licence only for the next one, never for itself
            if self.prior(e):
                credit[key] = credit[key] + 1 if self.consume else 1
        return out


def Before(a: Match, b: Match, same: tuple[str, ...] = (), name: str = "before") -> RequiresPrior:
    """ "A before B": a ``b`` may only happen once some ``a`` has happened."""
    return RequiresPrior(event=b, prior=a, same=same, name=name)


@dataclass(frozen=True)
class NeverAfter(Rule):
    """No ``event`` after an ``after`` with equal ``same`` attributes (Declare
    *not-succession*): "no account change after the case is closed"."""

    event: Match
    after: Match
    same: tuple[str, ...] = ()
    name: str = "never_after"

    def check(self, events: Sequence[Event]) -> list[Violation]:
        seen: dict[tuple[Any, ...], int] = {}
        out = []
        for e in events:
            key = _key(e, self.same)
            if self.event(e) and key in seen:
                out.append(
                    Violation(
                        self.name,
                        e.step,
                        f"{e.name} after {self.after.describe()} at step {seen[key]}"
                        + _scope(key, self.same),
                    )
                )
            if self.after(e):
                seen.setdefault(key, e.step)
        return out


@dataclass(frozen=True)
class AtMost(Rule):
    """At most ``n`` matching events per ``same`` group (``n = 0``: Declare *absence*)."""

    n: int
    event: Match
    same: tuple[str, ...] = ()
    name: str = "at_most"

    def check(self, events: Sequence[Event]) -> list[Violation]:
        counts: Counter[tuple[Any, ...]] = Counter()
        out = []
        for e in events:
            if not self.event(e):
                continue
            key = _key(e, self.same)
            counts[key] += 1
            if counts[key] > self.n:
                out.append(
                    Violation(
                        self.name,
                        e.step,
                        f"{e.name} is occurrence {counts[key]}, at most {self.n} allowed"
                        + _scope(key, self.same),
                    )
                )
        return out


def Never(event: Match, name: str = "never") -> AtMost:
    """No matching event at all."""
    return AtMost(0, event, name=name)


@dataclass(frozen=True)
class AtLeast(Rule):
    """At least ``n`` matching events (Declare *existence*). A missing event has no step
    of its own, so the violation is reported at the last step of the log."""

    n: int
    event: Match
    name: str = "at_least"

    def check(self, events: Sequence[Event]) -> list[Violation]:
        count = sum(1 for e in events if self.event(e))
        if count >= self.n:
            return []
        last = events[-1].step if events else 0
        msg = f"{count} x {self.event.describe()}, at least {self.n} required"
        return [Violation(self.name, last, msg)]


@dataclass(frozen=True)
class Response(Rule):
    """Every ``event`` is eventually followed by a ``then`` with equal ``same`` attributes
    (Declare *response*): "every timeout on a write is followed by a retry"."""

    event: Match
    then: Match
    same: tuple[str, ...] = ()
    name: str = "response"

    def check(self, events: Sequence[Event]) -> list[Violation]:
        open_: dict[tuple[Any, ...], list[Event]] = defaultdict(list)
        for e in events:
            key = _key(e, self.same)
            if self.then(e):
                open_.pop(key, None)
            if self.event(e):
                open_[key].append(e)
        pending = sorted((e for group in open_.values() for e in group), key=lambda e: e.step)
        return [
            Violation(
                self.name,
                e.step,
                f"{e.name} never followed by {self.then.describe()}"
                + _scope(_key(e, self.same), self.same),
            )
            for e in pending
        ]


def check_rules(rules: Iterable[Rule], events: Sequence[Event]) -> list[Violation]:
    """All violations of all rules, ordered by step then rule name."""
    found = [v for rule in rules for v in rule.check(events)]
    return sorted(found, key=lambda v: (v.step, v.rule))
