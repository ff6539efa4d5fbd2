"""Writes: idempotency keys, timeout after commit, rate limits, rollback, the action log."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from notes_world import NotesEnv

from gymforge.core import Reply, SyncEnvironment, ToolCall
from gymforge.verify.rules import check_rules
from gymforge.world import WorldFaults
from gymforge.world.writes import WRITE_RULES

TASK = NotesEnv.tasks.sample(1, 0, "train")[0]


@pytest.fixture
def env() -> Iterator[SyncEnvironment]:
    sync = SyncEnvironment(NotesEnv())
    yield sync
    sync.close()


def add(text: str, key: str = "", tag: str = "TG-0") -> ToolCall:
    args = {"text": text, "tag_id": tag}
    if key:
        args["idempotency_key"] = key
    return ToolCall(name="add_note", arguments=args)


def notes(env: SyncEnvironment) -> list[str]:
    return [r["text"] for r in env.env.db.all("SELECT text FROM notes ORDER BY id")]


def with_faults(monkeypatch: pytest.MonkeyPatch, **kw: object) -> None:
    monkeypatch.setattr(NotesEnv, "faults", WorldFaults(**kw))  # type: ignore[arg-type]


def test_same_key_replays_the_stored_response(env: SyncEnvironment) -> None:
    env.reset(TASK, 0)
    first = env.step(add("a", "k1")).info["tool_result"]
    again = env.step(add("a", "k1")).info["tool_result"]
    assert first["ok"] and again == first
    assert notes(env) == ["a"]
    log = env.env.log
    assert log[0].attrs["effect"] is True and log[1].attrs["effect"] is False
    assert log[1].attrs["replay"] is True and log[1].attrs["resubmit"] is True  # seen, resent


def test_same_key_other_arguments_is_a_conflict(env: SyncEnvironment) -> None:
    env.reset(TASK, 0)
    env.step(add("a", "k1"))
    err = env.step(add("b", "k1")).info["tool_result"]["error"]
    assert err["kind"] == "conflict" and not err["retryable"]
    assert notes(env) == ["a"]


def test_timeout_after_commit_then_retry_with_the_key_is_safe(
    env: SyncEnvironment, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_faults(monkeypatch, forced=(("add_note", 0, "commit_timeout"),))
    env.reset(TASK, 0)
    r = env.step(add("a", "k1")).info["tool_result"]
    assert not r["ok"] and r["error"]["kind"] == "timeout" and r["error"]["retryable"]
    assert notes(env) == ["a"]  # applied although the agent saw a timeout
    retry = env.step(add("a", "k1")).info["tool_result"]
    assert retry["ok"] and notes(env) == ["a"]
    replay = env.env.log[-1].attrs
    assert replay["replay"] is True and replay["resubmit"] is False  # a legitimate retry
    assert check_rules(WRITE_RULES, env.env.log) == []


def test_timeout_after_commit_then_retry_without_the_key_applies_twice(
    env: SyncEnvironment, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_faults(monkeypatch, forced=(("add_note", 0, "commit_timeout"),))
    env.reset(TASK, 0)
    env.step(add("a"))
    env.step(add("a"))
    assert notes(env) == ["a", "a"]
    rules = {v.rule for v in check_rules(WRITE_RULES, env.env.log)}
    assert rules == {"idempotency_key_required"}
    steps = [v.step for v in check_rules(WRITE_RULES, env.env.log)]
    assert steps == [1, 2]


def test_rate_limit_refuses_before_running(
    env: SyncEnvironment, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_faults(
        monkeypatch, forced=(("add_note", 0, "rate_limited"), ("list_notes", 0, "rate_limited"))
    )
    env.reset(TASK, 0)
    r = env.step(add("a", "k1")).info["tool_result"]
    assert r["error"] == {
        "kind": "rate_limited",
        "message": r["error"]["message"],
        "retryable": True,
    }
    assert notes(env) == []
    assert (
        env.step(ToolCall(name="list_notes")).info["tool_result"]["error"]["kind"] == "rate_limited"
    )
    assert env.step(add("a", "k1")).info["tool_result"]["ok"]  # the key was never stored
    assert notes(env) == ["a"]


def test_an_expired_session_refuses_reads_and_writes_until_retried(
    env: SyncEnvironment, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_faults(
        monkeypatch,
        forced=(("add_note", 0, "permission_denied"), ("list_notes", 0, "permission_denied")),
    )
    env.reset(TASK, 0)
    r = env.step(add("a", "k1")).info["tool_result"]
    assert r["error"]["kind"] == "permission_denied" and r["error"]["retryable"] is True
    assert "session" in r["error"]["message"]
    assert notes(env) == [] and env.env.log[-1].attrs["world_fault"] == "permission_denied"
    listed = env.step(ToolCall(name="list_notes")).info["tool_result"]
    assert listed["error"]["kind"] == "permission_denied"
    assert env.step(add("a", "k1")).info["tool_result"]["ok"]  # nothing ran, nothing stored
    assert notes(env) == ["a"]


def test_permission_faults_take_their_own_share_of_calls() -> None:
    faults = WorldFaults(commit_timeout=0.2, rate_limited=0.1, permission_denied=0.2)
    kinds = [faults.decide("t", 3, "add_note", i, writes=True) for i in range(400)]
    assert {"commit_timeout", "rate_limited", "permission_denied", None} == set(kinds)
    reads = {faults.decide("t", 3, "list_notes", i, writes=False) for i in range(400)}
    assert reads == {"rate_limited", "permission_denied", None}
    # without permission faults every other decision is what it was
    plain = WorldFaults(commit_timeout=0.2, rate_limited=0.1)
    with_zero = WorldFaults(commit_timeout=0.2, rate_limited=0.1, permission_denied=0.0)
    assert [plain.decide("t", 3, "add_note", i, True) for i in range(200)] == [
        with_zero.decide("t", 3, "add_note", i, True) for i in range(200)
    ]
    with pytest.raises(ValueError):
        WorldFaults(commit_timeout=0.5, rate_limited=0.2, permission_denied=0.4)


def test_world_faults_are_seeded_per_call() -> None:
    faults = WorldFaults(commit_timeout=0.3, rate_limited=0.2)
    a = [faults.decide("t", 1, "add_note", i, writes=True) for i in range(200)]
    assert a == [faults.decide("t", 1, "add_note", i, writes=True) for i in range(200)]
    assert a != [faults.decide("t", 2, "add_note", i, writes=True) for i in range(200)]
    assert {"commit_timeout", "rate_limited", None} == set(a)
    reads = {faults.decide("t", 1, "list_notes", i, writes=False) for i in range(200)}
    assert "commit_timeout" not in reads
    with pytest.raises(ValueError):
        WorldFaults(commit_timeout=0.8, rate_limited=0.5)


def test_a_failing_write_rolls_back_and_is_logged_without_effect(env: SyncEnvironment) -> None:
    env.reset(TASK, 0)
    r = env.step(add("a", "k1", tag="TG-9")).info["tool_result"]
    assert r["error"]["kind"] == "not_found"
    assert notes(env) == [] and env.env.db.diff().changed_tables == frozenset()
    assert env.env.log[-1].attrs["effect"] is False
    assert env.step(add("a", "k1")).info["tool_result"]["ok"]  # the key was not burnt


def test_oversized_text_is_a_validation_error(env: SyncEnvironment) -> None:
    env.reset(TASK, 0)
    r = env.step(add("x" * 5000, "k")).info["tool_result"]
    assert r["error"]["kind"] == "validation"


def test_action_log_records_replies_and_tool_outcomes(env: SyncEnvironment) -> None:
    env.reset(TASK, 0)
    env.step(ToolCall(name="nope"))
    env.step(add("a", "k1"))
    result = env.step(Reply(text="done"))
    names = [e.name for e in env.env.log]
    assert names == ["tool.?", "tool.add_note", "agent.reply"]
    assert env.env.log[0].attrs["error"] == "unknown_tool"
    assert env.env.log[1].attrs["keyed"] is True
    assert result.terminated and result.info["verdict"]["reason"] in ("missing_change", None)
