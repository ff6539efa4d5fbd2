"""Declarative process rules: each template with a violating log and a compliant one."""

from __future__ import annotations

from typing import Any

from gymforge.verify.rules import (
    AtLeast,
    AtMost,
    Before,
    LogEvent,
    Match,
    Never,
    NeverAfter,
    RequiresPrior,
    Response,
    check_rules,
)


def log(*entries: tuple[str, dict[str, Any]]) -> list[LogEvent]:
    return [LogEvent(i + 1, name, attrs) for i, (name, attrs) in enumerate(entries)]


READ = Match("tool.read", where={"ok": True})
WRITE = Match("tool.write", where={"effect": True})
CONFIRM = Match("user.confirm")


def test_match_globs_attributes_and_predicates() -> None:
    e = LogEvent(1, "tool.issue_refund", {"ok": True, "kind": "card", "amount": 50})
    assert Match("tool.*")(e) and not Match("user.*")(e)
    assert Match(where={"kind": ("card", "bank")})(e)
    assert not Match(where={"ok": False})(e)
    assert Match(test=lambda ev: ev.attrs["amount"] > 10)(e)
    assert not Match(where={"missing": True})(e)


def test_requires_prior_for_the_same_entity() -> None:
    rule = RequiresPrior(WRITE, READ, same=("entity",), name="read_first")
    ok = log(
        ("tool.read", {"ok": True, "entity": "a"}), ("tool.write", {"effect": True, "entity": "a"})
    )
    bad = log(
        ("tool.read", {"ok": True, "entity": "b"}), ("tool.write", {"effect": True, "entity": "a"})
    )
    assert rule.check(ok) == []
    [v] = rule.check(bad)
    assert (v.rule, v.step) == ("read_first", 2) and "entity=a" in v.message


def test_requires_prior_with_consume_needs_one_prior_per_event() -> None:
    rule = RequiresPrior(WRITE, CONFIRM, consume=True, name="confirm_each")
    ok = log(
        ("user.confirm", {}),
        ("tool.write", {"effect": True}),
        ("user.confirm", {}),
        ("tool.write", {"effect": True}),
    )
    bad = log(
        ("user.confirm", {}), ("tool.write", {"effect": True}), ("tool.write", {"effect": True})
    )
    assert rule.check(ok) == []
    assert [v.step for v in rule.check(bad)] == [3]
    assert [v.step for v in RequiresPrior(WRITE, CONFIRM).check(bad)] == []  # without consume


def test_before_is_a_before_b() -> None:
    rule = Before(READ, WRITE, name="read_before_write")
    assert rule.check(log(("tool.read", {"ok": True}), ("tool.write", {"effect": True}))) == []
    assert [
        v.step
        for v in rule.check(log(("tool.write", {"effect": True}), ("tool.read", {"ok": True})))
    ] == [1]


def test_never_after() -> None:
    rule = NeverAfter(WRITE, Match("tool.close"), name="nothing_after_close")
    ok = log(("tool.write", {"effect": True}), ("tool.close", {}))
    bad = log(("tool.close", {}), ("tool.read", {"ok": True}), ("tool.write", {"effect": True}))
    assert rule.check(ok) == []
    [v] = rule.check(bad)
    assert v.step == 3 and "step 1" in v.message


def test_at_most_n_per_group_and_never() -> None:
    rule = AtMost(1, WRITE, same=("account",), name="once_per_account")
    entries = log(
        ("tool.write", {"effect": True, "account": "a"}),
        ("tool.write", {"effect": True, "account": "b"}),
        ("tool.write", {"effect": True, "account": "a"}),
    )
    assert [v.step for v in rule.check(entries)] == [3]
    assert [v.step for v in Never(Match("tool.write", where={"account": "b"})).check(entries)] == [
        2
    ]


def test_at_least_and_response() -> None:
    closed = log(("tool.read", {"ok": True}), ("tool.close", {}))
    assert AtLeast(1, Match("tool.close")).check(closed) == []
    [v] = AtLeast(1, Match("tool.close")).check(closed[:1])
    assert v.step == 1
    rule = Response(
        Match("tool.write", where={"error": "timeout"}), Match("tool.write", where={"ok": True})
    )
    retried = log(("tool.write", {"error": "timeout"}), ("tool.write", {"ok": True}))
    assert rule.check(retried) == []
    assert [v.step for v in rule.check(retried[:1])] == [1]


def test_check_rules_orders_violations_by_step() -> None:
    entries = log(
        ("tool.write", {"effect": True}), ("tool.close", {}), ("tool.write", {"effect": True})
    )
    found = check_rules(
        [
            RequiresPrior(WRITE, CONFIRM, name="confirm"),
            NeverAfter(WRITE, Match("tool.close"), name="after"),
        ],
        entries,
    )
    assert [(v.step, v.rule) for v in found] == [(1, "confirm"), (3, "after"), (3, "confirm")]
    assert found[0].as_json() == {"rule": "confirm", "step": 1, "message": found[0].message}
