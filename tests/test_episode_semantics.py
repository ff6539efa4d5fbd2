"""Episode semantics through the ledger env: budgets, malformed output, rewards, isolation,
verifier crashes, held-out splits and task-id resolution."""

from __future__ import annotations

import asyncio
import math
import re

import pytest
from pydantic import ValidationError

from gymforge.core import (
    Budget,
    Invalid,
    MalformedPolicy,
    Reply,
    StepResult,
    ToolCall,
    fingerprint,
)
from gymforge.core.policy import episode_context
from gymforge.core.tokens import ApproxTokenCounter
from gymforge.envs.ledger import LedgerEnv
from gymforge.kit.tool_env import PARSE_ERROR_HINT
from gymforge.rollout import RandomPolicy

SOURCE = LedgerEnv.tasks
TASK = "ledger.transfer/v1/d1/s3"
SEARCH = ToolCall(name="search_customers", arguments={"name": "a"})
BAD = Invalid(raw="<tool_call>{", error="unterminated JSON")


def check_step(r: StepResult) -> None:
    assert r.reward == math.fsum(r.reward_components.values())
    assert not (r.terminated and r.truncated)
    assert r.reward_components.get("step_cost") == -0.01


# ---- truncation --------------------------------------------------------------------------
def test_max_steps_truncation(make_sync) -> None:
    env = make_sync()
    env.reset(TASK, 0)
    results = []
    while not results or not results[-1].done:
        results.append(env.step(SEARCH))
        check_step(results[-1])
    last = results[-1]
    assert len(results) == LedgerEnv.budget.max_steps == 24
    assert last.truncated is True and last.terminated is False
    assert last.info["end_reason"] == "max_steps"
    assert last.info["success"] is False
    assert "task" not in last.reward_components
    assert "verdict" not in last.info
    assert all("end_reason" not in r.info for r in results[:-1])


class TokenBudgetLedger(LedgerEnv):
    budget = Budget(max_steps=50, max_tokens=300)


def test_max_tokens_truncation(make_sync) -> None:
    env = make_sync(TokenBudgetLedger)
    counter = ApproxTokenCounter()
    action_tokens = counter.count_text('search_customers{"name":"a"}')
    used = env.reset(TASK, 0).tokens
    results = []
    while not results or not results[-1].done:
        assert used < 300  # the budget was not spent before this step
        r = env.step(SEARCH)
        check_step(r)
        used += action_tokens + r.observation.tokens
        results.append(r)
    last = results[-1]
    assert used >= 300
    assert env.env.counters.tokens == used
    assert last.truncated and not last.terminated
    assert last.info["end_reason"] == "max_tokens"
    assert last.info["success"] is False
    assert "task" not in last.reward_components
    assert 1 < len(results) < 50


def test_reply_on_last_step_terminates_not_truncates(make_sync) -> None:
    env = make_sync()
    env.reset(TASK, 0)
    for _ in range(LedgerEnv.budget.max_steps - 1):
        assert not env.step(SEARCH).done
    r = env.step(Reply(text="done"))
    assert r.terminated and not r.truncated
    assert r.info["end_reason"] == "verdict"
    assert "task" in r.reward_components


def test_budget_validation() -> None:
    with pytest.raises(ValueError):
        Budget(max_steps=0)
    with pytest.raises(ValueError):
        Budget(max_tokens=0)


# ---- malformed output --------------------------------------------------------------------
class RecoverLedger(LedgerEnv):
    malformed = MalformedPolicy(mode="recover")


class PenalizeLedger(LedgerEnv):
    malformed = MalformedPolicy(mode="penalize", penalty=-0.25)


class EndLedger(LedgerEnv):
    malformed = MalformedPolicy(mode="end", penalty=-0.5)


def test_default_malformed_policy_is_recover() -> None:
    assert LedgerEnv.malformed.mode == "recover"
    assert LedgerEnv.malformed.max_consecutive == 3


def test_recover_mode(make_sync) -> None:
    env = make_sync(RecoverLedger)
    env.reset(TASK, 0)
    r = env.step(BAD)
    check_step(r)
    assert not r.done
    assert "malformed" not in r.reward_components
    assert r.reward_components == {"step_cost": -0.01}
    assert r.info["malformed"] == "unterminated JSON"
    assert r.observation.data == {"parse_error": "unterminated JSON"}
    [msg] = r.observation.messages
    assert msg.role == "user"
    assert msg.content == PARSE_ERROR_HINT.format(error="unterminated JSON")
    assert "could not be parsed" in msg.content
    # the agent can recover: a valid call resets the consecutive count
    assert env.step(BAD).done is False
    assert env.step(SEARCH).done is False
    assert env.step(BAD).done is False
    assert env.step(BAD).done is False
    assert env.snapshot()["transfers"] == []


def test_recover_mode_consecutive_cap(make_sync) -> None:
    env = make_sync(RecoverLedger)
    env.reset(TASK, 0)
    results = [env.step(BAD) for _ in range(3)]
    for r in results:
        check_step(r)
        assert "malformed" not in r.reward_components
    assert not results[0].done and not results[1].done
    last = results[2]
    assert last.terminated and not last.truncated
    assert last.info["end_reason"] == "malformed_cap"
    assert last.info["success"] is False
    assert "task" not in last.reward_components


def test_reply_resets_consecutive_malformed(make_sync) -> None:
    env = make_sync(RecoverLedger)
    env.reset(TASK, 0)
    env.step(BAD)
    env.step(BAD)
    assert env.env.counters.consecutive_malformed == 2
    env.step(ToolCall(name="nope"))
    assert env.env.counters.consecutive_malformed == 0
    assert env.env.counters.malformed == 2


def test_penalize_mode(make_sync) -> None:
    env = make_sync(PenalizeLedger)
    env.reset(TASK, 0)
    r = env.step(BAD)
    check_step(r)
    assert not r.done
    assert r.reward_components == {"step_cost": -0.01, "malformed": -0.25}
    assert r.reward == pytest.approx(-0.26)
    assert "could not be parsed" in r.observation.text()
    r = env.step(SEARCH)
    assert not r.done and "malformed" not in r.reward_components
    # the cap applies in penalize mode too
    env.step(BAD)
    env.step(BAD)
    r = env.step(BAD)
    assert r.terminated and r.info["end_reason"] == "malformed_cap"
    assert r.reward_components["malformed"] == -0.25


def test_end_mode(make_sync) -> None:
    env = make_sync(EndLedger)
    env.reset(TASK, 0)
    r = env.step(BAD)
    check_step(r)
    assert r.terminated and not r.truncated
    assert r.info["end_reason"] == "malformed"
    assert r.info["success"] is False
    assert r.reward_components == {"step_cost": -0.01, "malformed": -0.5}
    assert "task" not in r.reward_components


# ---- rewards -----------------------------------------------------------------------------
def test_invalid_calls_give_invalid_call_component(make_sync) -> None:
    env = make_sync()
    env.reset(TASK, 0)
    for action in [
        ToolCall(name="delete_all"),
        ToolCall(name="search_customers", arguments={}),
        ToolCall(name="search_customers", arguments={"name": 5}),
        ToolCall(name="search_customers", arguments={"name": "a", "zzz": 1}),
        ToolCall(name="transfer", arguments={"from_account": "a", "to_account": "b"}),
    ]:
        r = env.step(action)
        check_step(r)
        assert r.reward_components == {"step_cost": -0.01, "invalid_call": -0.1}
        assert r.info["tool_result"]["ok"] is False
    assert env.env.counters.invalid_calls == 5
    r = env.step(SEARCH)
    assert "invalid_call" not in r.reward_components


def test_reward_is_sum_of_components_on_every_step() -> None:
    """Every step of random episodes (invalid calls, malformed output, replies, faults)."""

    async def go() -> int:
        n = 0
        env = PenalizeLedger()
        for i, task_id in enumerate(SOURCE.sample(12, 21, "all")):
            policy = RandomPolicy(reply_rate=0.03)
            await policy.start(episode_context(policy, env, task_id, i))
            obs = await env.reset(task_id, i)
            while True:
                r = await env.step((await policy.act(obs)).action)
                check_step(r)
                n += 1
                obs = r.observation
                if r.done:
                    assert r.info["end_reason"] in {
                        "verdict",
                        "malformed",
                        "malformed_cap",
                        "max_steps",
                        "max_tokens",
                    }
                    assert r.truncated == (r.info["end_reason"] in {"max_steps", "max_tokens"})
                    break
        return n

    assert asyncio.run(go()) > 50


# ---- verifier crash ----------------------------------------------------------------------
class CrashingVerifierLedger(LedgerEnv):
    def verify(self, task, world, reply):  # type: ignore[no-untyped-def]
        raise ZeroDivisionError("checker bug")


def test_crashing_verifier_does_not_raise(make_sync) -> None:
    env = make_sync(CrashingVerifierLedger)
    env.reset(TASK, 0)
    r = env.step(Reply(text="done"))
    check_step(r)
    assert r.terminated and not r.truncated
    assert r.info["verifier_error"] is True
    assert r.info["verdict"]["reason"] == "verifier_error"
    assert r.info["verdict"]["passed"] is False
    assert "ZeroDivisionError" in r.info["verdict"]["facts"]["error"]
    assert r.info["end_reason"] == "verdict"
    assert r.info["success"] is False
    assert "verify_ms" in r.timing and "verify_ms" not in r.info


def test_normal_verdict_has_no_verifier_error_flag(make_sync) -> None:
    env = make_sync()
    env.reset(TASK, 0)
    assert "verifier_error" not in env.step(Reply(text="done")).info


# ---- reset isolation ---------------------------------------------------------------------
def dirty_episode(env, task_id: str, seed: int) -> None:
    """Make every kind of change: transfers, faults, malformed output, no clean ending."""
    env.reset(task_id, seed)
    snap = env.snapshot()
    accounts = [a["account_id"] for a in snap["accounts"]]
    for i in range(3):
        env.step(
            ToolCall(
                name="transfer",
                arguments={
                    "from_account": accounts[i],
                    "to_account": accounts[i + 1],
                    "amount_cents": 1_00 + i,
                },
            )
        )
    env.step(ToolCall(name="list_accounts", arguments={"customer_id": "C100"}))
    env.step(BAD)
    assert len(env.snapshot()["transfers"]) == 3


@pytest.mark.parametrize(
    "target", ["ledger.transfer/v1/d1/s3", "ledger.transfer/v1/d2/s40", "ledger.transfer/v1/d3/s5"]
)
def test_reset_isolation_after_dirty_episode(target: str, make_sync) -> None:
    fresh = make_sync()
    fresh_obs = fresh.reset(target, 7)
    expected = fingerprint(fresh.snapshot())

    used = make_sync()
    dirty_episode(used, "ledger.transfer/v1/d3/s99", 1)
    used_obs = used.reset(target, 7)
    assert fingerprint(used.snapshot()) == expected
    assert used_obs == fresh_obs
    assert used.env.counters.steps == 0 and used.env.counters.tokens == fresh.env.counters.tokens
    # and the same actions behave the same afterwards (no leaked call counters or history)
    for action in [
        ToolCall(name="list_accounts", arguments={"customer_id": "C100"}),
        ToolCall(name="list_accounts", arguments={"customer_id": "C100"}),
        SEARCH,
        BAD,
    ]:
        a, b = fresh.step(action), used.step(action)
        assert (a.observation, a.reward_components, a.info) == (
            b.observation,
            b.reward_components,
            b.info,
        )
        assert fingerprint(fresh.snapshot()) == fingerprint(used.snapshot())


def test_reset_same_task_after_dirty_episode(make_sync) -> None:
    env = make_sync()
    task_id = "ledger.transfer/v1/d3/s5"
    env.reset(task_id, 2)
    expected = fingerprint(env.snapshot())
    dirty_episode(env, task_id, 2)
    assert fingerprint(env.snapshot()) != expected
    env.reset(task_id, 2)
    assert fingerprint(env.snapshot()) == expected


def test_fingerprint_after_reset_depends_on_task() -> None:
    a = SOURCE.resolve("ledger.transfer/v1/d1/s3")
    b = SOURCE.resolve("ledger.transfer/v1/d1/s4")
    assert fingerprint(a.truth["world"]) != fingerprint(b.truth["world"])


def test_interleaved_instances_do_not_interfere(make_sync) -> None:
    t1, t2 = "ledger.transfer/v1/d1/s3", "ledger.transfer/v1/d1/s8"

    def solo(task_id: str) -> list[str]:
        env = make_sync()
        plan = env.env.oracle_plan(SOURCE.resolve(task_id))
        env.reset(task_id, 0)
        return [fingerprint([env.step(a).info, env.snapshot()]) for a in plan]

    expected1, expected2 = solo(t1), solo(t2)
    e1, e2 = make_sync(), make_sync()
    e1.reset(t1, 0)
    e2.reset(t2, 0)
    plan1 = e1.env.oracle_plan(e1.env.task)
    plan2 = e2.env.oracle_plan(e2.env.task)
    got1, got2 = [], []
    for i in range(max(len(plan1), len(plan2))):
        if i < len(plan1):
            got1.append(fingerprint([e1.step(plan1[i]).info, e1.snapshot()]))
        if i < len(plan2):
            got2.append(fingerprint([e2.step(plan2[i]).info, e2.snapshot()]))
    assert got1 == expected1 and got2 == expected2


def test_world_is_not_shared_with_task_truth(make_sync) -> None:
    env = make_sync()
    env.reset(TASK, 0)
    move = env.env.task.truth["moves"][0]
    env.step(
        ToolCall(
            name="transfer",
            arguments={
                "from_account": move["from"],
                "to_account": move["to"],
                "amount_cents": move["amount"],
            },
        )
    )
    assert SOURCE.resolve(TASK).truth["world"]["transfers"] == []
    assert env.env.task.truth["world"]["transfers"] == []


# ---- held-out split and task ids ---------------------------------------------------------
def test_train_sampling_never_yields_heldout() -> None:
    for seed in (0, 1, 2):
        ids = SOURCE.sample(200, seed, "train")
        assert len(ids) == 200
        for task_id in ids:
            task = SOURCE.resolve(task_id)
            assert task.split == "train", task_id
            assert task.params["transfers"] != 3
            assert not SOURCE.split.is_heldout(task.family, task.params)


def test_heldout_sampling_yields_only_heldout() -> None:
    for seed in (0, 1):
        ids = SOURCE.sample(20, seed, "heldout")
        assert len(ids) == 20
        for task_id in ids:
            task = SOURCE.resolve(task_id)
            assert task.split == "heldout", task_id
            assert task.params["transfers"] == 3
            assert len(task.truth["moves"]) == 3


def test_all_split_mixes_both() -> None:
    splits = {SOURCE.resolve(t).split for t in SOURCE.sample(200, 0, "all")}
    assert splits == {"train", "heldout"}


def test_split_check_train_refuses_heldout() -> None:
    from gymforge.tasks import HeldOutError

    held = SOURCE.resolve(SOURCE.sample(1, 0, "heldout")[0])
    with pytest.raises(HeldOutError):
        SOURCE.split.check_train(held)
    train = SOURCE.resolve(SOURCE.sample(1, 0, "train")[0])
    assert SOURCE.split.check_train(train) is train


def test_sampling_is_deterministic() -> None:
    assert SOURCE.sample(30, 5, "train") == SOURCE.sample(30, 5, "train")
    assert SOURCE.sample(30, 5, "train") != SOURCE.sample(30, 6, "train")
    assert all(f"/d{d}/" in t for d in (2,) for t in SOURCE.sample(10, 1, difficulties=[2]))


def test_task_ids_resolve_identically() -> None:
    for task_id in [*SOURCE.sample(10, 3, "train"), *SOURCE.sample(5, 3, "heldout")]:
        a, b = SOURCE.resolve(task_id), SOURCE.resolve(task_id)
        assert a == b
        assert a.task_id == task_id
        assert a.prompt == b.prompt and a.truth == b.truth and a.params == b.params


def test_task_id_resolution_is_stable_across_instances(make_sync) -> None:
    task_id = "ledger.transfer/v1/d2/s12345"
    e1, e2 = make_sync(), make_sync()
    assert e1.reset(task_id, 0) == e2.reset(task_id, 0)
    assert e1.env.task == e2.env.task
    assert fingerprint(e1.snapshot()) == fingerprint(e2.snapshot())


@pytest.mark.parametrize(
    "task_id",
    [
        "nope",
        "ledger.transfer/v3/d1/s1",
        "other.family/v1/d1/s1",
        "ledger.transfer/v1/d9/s1",
        "ledger.transfer/v1/d1/s-1",
    ],
)
def test_unknown_task_ids_raise_user_error(task_id: str, make_sync) -> None:
    from gymforge.core import UnknownTaskError

    with pytest.raises(UnknownTaskError):
        SOURCE.resolve(task_id)
    with pytest.raises(UnknownTaskError):
        make_sync().reset(task_id, 0)


# ---- bad agent input never raises out of step ---------------------------------------------
@pytest.mark.parametrize(
    "action",
    [
        ToolCall(name="x" * 300, arguments={"a": [1, {"b": None}]}),
        ToolCall(
            name="transfer",
            arguments={"from_account": {"$gt": ""}, "to_account": [], "amount_cents": 10**30},
        ),
        Reply(text="ünï ☃ " * 200),
        Invalid(raw="\x00" * 10, error="\x00"),
    ],
)
def test_odd_agent_input_does_not_raise(action, make_sync) -> None:
    env = make_sync()
    env.reset(TASK, 0)
    check_step(env.step(action))


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_argument_is_refused_at_the_action_boundary(value: float, make_sync) -> None:
    """NaN and infinities are not JSON: a ToolCall refuses them, so a parser turns such model
    output into an Invalid action, which the malformed-output policy then handles."""
    with pytest.raises(ValidationError, match="NaN and infinities"):
        ToolCall(name="transfer", arguments={"amount_cents": value})
    with pytest.raises(ValidationError, match="NaN and infinities"):
        ToolCall(name="transfer", arguments={"nested": [{"x": value}]})
    env = make_sync()
    env.reset(TASK, 0)
    r = env.step(Invalid(raw='{"amount_cents": NaN}', error="non-finite number"))
    check_step(r)
    assert "parse_error" in r.observation.data


@pytest.mark.parametrize(
    ("arguments", "where"),
    [
        ({"ids": {1, 2}}, "arguments.ids: set is not JSON"),
        ({"when": [1, object()]}, "arguments.when[1]: object is not JSON"),
        ({"by": {1: "a"}}, "arguments.by: key 1 (int) is not a string"),
        ({"raw": b"bytes"}, "arguments.raw: bytes is not JSON"),
    ],
)
def test_arguments_that_are_not_json_are_refused_by_path(
    arguments: dict[str, object], where: str
) -> None:
    """A policy bug (a set, an object, a non-string key) is refused when the ToolCall is
    built, naming where, instead of a TypeError deep inside an environment's step."""
    with pytest.raises(ValidationError, match=re.escape(where)):
        ToolCall(name="transfer", arguments=arguments)
