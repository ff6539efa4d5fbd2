"""The ledger reference environment: success, failure reasons and its tools."""

from __future__ import annotations

import asyncio

import pytest

from gymforge.core import Reply, ToolCall
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout import LocalExecutor, NoopPolicy, OraclePolicy, RandomPolicy, RunSpec, run

SOURCE = LedgerEnv.tasks


def transfer_call(move: dict) -> ToolCall:
    return ToolCall(
        name="transfer",
        arguments={
            "from_account": move["from"],
            "to_account": move["to"],
            "amount_cents": move["amount"],
        },
    )


def balances(snapshot: dict) -> dict[str, int]:
    return {a["account_id"]: a["balance_cents"] for a in snapshot["accounts"]}


@pytest.mark.parametrize("difficulty", [1, 2, 3])
def test_oracle_succeeds(difficulty: int, make_sync, play_oracle) -> None:
    env = make_sync()
    for i, task_id in enumerate(SOURCE.sample(8, 11, "train", difficulties=[difficulty])):
        assert f"/d{difficulty}/" in task_id
        results = play_oracle(env, task_id, i)
        last = results[-1]
        assert last.terminated and not last.truncated
        assert last.info["end_reason"] == "verdict"
        assert last.info["success"] is True
        assert last.info["verdict"]["passed"] is True
        assert last.reward_components["task"] == 1.0
        assert all("task" not in r.reward_components for r in results[:-1])
        assert all(not r.done for r in results[:-1])
        moves = env.env.task.truth["moves"]
        assert len(env.snapshot()["transfers"]) == len(moves)


def test_oracle_recovers_from_forced_timeout(make_sync, play_oracle) -> None:
    env = make_sync()
    task_id = SOURCE.sample(1, 5, "train", difficulties=[2])[0]
    results = play_oracle(env, task_id, 0)
    faults = [r.info.get("fault") for r in results]
    assert "timeout" in faults  # list_accounts call 0 always times out from d2
    assert results[-1].info["success"] is True


def test_oracle_run_success_rate() -> None:
    jobs = [(t, 7) for t in SOURCE.sample(30, 2, "train")]
    result = asyncio.run(
        run(
            RunSpec(env="ledger", policy="oracle", jobs=jobs),
            LocalExecutor(LedgerEnv, OraclePolicy),
        )
    )
    assert result.summary["episodes"] == 30
    assert result.summary["success_rate"] >= 0.95
    assert result.errors == []


def test_noop_fails_with_no_change(make_sync) -> None:
    env = make_sync()
    env.reset("ledger.transfer/v1/d1/s3", 0)
    before = env.snapshot()
    r = env.step(Reply(text=""))
    assert r.terminated and not r.truncated
    assert r.info["success"] is False
    assert r.info["verdict"]["passed"] is False
    assert r.info["verdict"]["reason"] == "no_change"
    assert r.reward_components == {"step_cost": -0.01, "task": 0.0}
    assert env.snapshot() == before


def test_noop_and_random_policies_fail_in_runs() -> None:
    jobs = [(t, 1) for t in SOURCE.sample(20, 4, "train")]
    noop = asyncio.run(
        run(RunSpec(env="ledger", policy="noop", jobs=jobs), LocalExecutor(LedgerEnv, NoopPolicy))
    )
    assert noop.summary["success_rate"] == 0.0
    assert noop.summary["failure_reasons"] == {"no_change": 20}
    rand = asyncio.run(
        run(
            RunSpec(env="ledger", policy="random", jobs=jobs),
            LocalExecutor(LedgerEnv, RandomPolicy),
        )
    )
    assert rand.summary["success_rate"] < 0.2


def test_wrong_amount_fails(make_sync) -> None:
    env = make_sync()
    env.reset("ledger.transfer/v1/d1/s3", 0)
    move = dict(env.env.task.truth["moves"][0])
    move["amount"] += 1
    assert env.step(transfer_call(move)).info["tool_result"]["ok"] is True
    r = env.step(Reply(text="done"))
    assert r.info["success"] is False
    assert r.info["verdict"]["reason"] == "wrong_transfers"
    assert r.info["verdict"]["facts"]["missing"] == 1
    assert r.info["verdict"]["facts"]["extra"] == 1
    assert r.reward_components["task"] == 0.0


def test_reversed_transfer_fails(make_sync) -> None:
    env = make_sync()
    env.reset("ledger.transfer/v1/d1/s8", 0)
    move = dict(env.env.task.truth["moves"][0])
    move["from"], move["to"] = move["to"], move["from"]
    env.step(transfer_call(move))
    r = env.step(Reply(text="done"))
    assert r.info["verdict"]["reason"] == "wrong_transfers"
    assert r.info["success"] is False


def test_missing_transfer_fails(make_sync) -> None:
    env = make_sync()
    task_id = next(
        t
        for t in SOURCE.sample(20, 9, "train", difficulties=[3])
        if len(SOURCE.resolve(t).truth["moves"]) >= 2
    )
    env.reset(task_id, 0)
    moves = env.env.task.truth["moves"]
    env.step(transfer_call(moves[0]))
    r = env.step(Reply(text="done"))
    assert r.info["verdict"]["reason"] == "wrong_transfers"
    assert r.info["verdict"]["facts"]["missing"] == len(moves) - 1
    assert r.info["verdict"]["score"] == pytest.approx(1 / len(moves))
    assert r.reward_components["task"] == 0.0  # no partial credit by default


def test_extra_transfer_is_collateral(make_sync) -> None:
    env = make_sync()
    env.reset("ledger.transfer/v1/d1/s3", 0)
    task = env.env.task
    for action in env.env.oracle_plan(task)[:-1]:
        assert env.step(action).info["tool_result"]["ok"] is True
    move = task.truth["moves"][0]
    extra = {**move, "amount": 100}
    assert env.step(transfer_call(extra)).info["tool_result"]["ok"] is True
    r = env.step(Reply(text="done"))
    assert r.info["success"] is False
    assert r.info["verdict"]["reason"] == "collateral"
    assert r.info["verdict"]["facts"] == {"expected": 1, "made": 2, "missing": 0, "extra": 1}


def test_duplicate_transfer_is_collateral(make_sync) -> None:
    env = make_sync()
    env.reset("ledger.transfer/v1/d1/s3", 0)
    move = env.env.task.truth["moves"][0]
    env.step(transfer_call(move))
    env.step(transfer_call(move))
    r = env.step(Reply(text="done"))
    assert r.info["verdict"]["reason"] == "collateral"


def test_transfer_moves_money_and_validates(make_sync) -> None:
    env = make_sync()
    env.reset("ledger.transfer/v1/d1/s3", 0)
    snap = env.snapshot()
    accounts = [a["account_id"] for a in snap["accounts"]]
    a, b = accounts[0], accounts[1]
    bal = balances(snap)

    def t(src: str, dst: str, amount: int) -> dict:
        step = env.step(
            ToolCall(
                name="transfer",
                arguments={"from_account": src, "to_account": dst, "amount_cents": amount},
            )
        )
        return step.info["tool_result"]

    assert t(a, "A00000X", 1)["error"]["kind"] == "not_found"
    assert t(a, a, 1)["error"]["kind"] == "validation"
    assert t(a, b, 0)["error"]["kind"] == "validation"
    assert t(a, b, -5)["error"]["kind"] == "validation"
    assert t(a, b, bal[a] + 1)["error"]["kind"] == "conflict"
    assert balances(env.snapshot()) == bal and env.snapshot()["transfers"] == []
    ok = t(a, b, 100)
    assert ok["ok"] is True and ok["content"]["transfer_id"] == "T1"
    now = balances(env.snapshot())
    assert now[a] == bal[a] - 100 and now[b] == bal[b] + 100
    assert sum(now.values()) == sum(bal.values())


def test_search_and_list_tools(make_sync) -> None:
    env = make_sync()
    env.reset("ledger.transfer/v1/d1/s3", 0)
    customers = env.snapshot()["customers"]
    first = customers[0]
    r = env.step(ToolCall(name="search_customers", arguments={"name": first["name"].upper()}))
    found = r.info["tool_result"]["content"]
    assert first in found
    assert all(first["name"] == c["name"] for c in found)
    r = env.step(ToolCall(name="list_accounts", arguments={"customer_id": first["customer_id"]}))
    accts = r.info["tool_result"]["content"]
    assert {a["kind"] for a in accts} == {"checking", "savings"}
    assert all(a["customer_id"] == first["customer_id"] for a in accts)
    r = env.step(ToolCall(name="list_accounts", arguments={"customer_id": "C999"}))
    assert r.info["tool_result"]["error"]["kind"] == "not_found"
    assert "invalid_call" not in r.reward_components  # a domain error, not a bad call


def test_distractors_share_names_in_other_cities() -> None:
    task = SOURCE.resolve("ledger.transfer/v1/d3/s77")
    customers = task.truth["world"]["customers"]
    assert len(customers) >= 6
    by_name: dict[str, set[str]] = {}
    for c in customers:
        by_name.setdefault(c["name"], set()).add(c["city"])
    for i in range(1, len(customers), 2):
        assert customers[i]["name"] == customers[i - 1]["name"]
        assert customers[i]["city"] != customers[i - 1]["city"]
    assert any(len(cities) >= 2 for cities in by_name.values())


def test_reset_observation(make_sync) -> None:
    env = make_sync()
    task_id = "ledger.transfer/v1/d2/s12"
    obs = env.reset(task_id, 0)
    assert [m.role for m in obs.messages] == ["system", "user"]
    assert obs.messages[1].content == SOURCE.resolve(task_id).prompt
    assert obs.data == {"task_id": task_id, "family": "ledger.transfer", "difficulty": 2}
    names = [t["function"]["name"] for t in obs.tools]
    assert names == ["search_customers", "list_accounts", "transfer"]
    # the hidden truth never reaches the agent
    truth = env.env.task.truth
    assert truth["moves"][0]["from"] not in obs.text()
