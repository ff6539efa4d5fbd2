"""TRL adapters: reward functions, rollout_func, environment_factory, dataset export.

Fast: none of these needs torch or TRL. The rollout tests drive real multi-turn ledger
episodes through the local OpenAI-compatible test server (vLLM token fields) and through a
scripted token-producing policy.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
import typing
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from gymforge.core.errors import UserError
from gymforge.core.types import Action, Observation, Reply, Task, ToolCall
from gymforge.envs.digits import DigitsEnv, problem_ids
from gymforge.envs.ledger import LedgerEnv
from gymforge.integrations.trl import (
    GymforgeReward,
    GymforgeRollout,
    environment_class,
    reward_funcs,
    submit_final_replies,
    task_rows,
)
from gymforge.integrations.trl_rollout import server_policy_for
from gymforge.rollout import CapturedTurn, EpisodeContext, OraclePolicy, PolicyTurn
from gymforge.rollout.openai_policy import OpenAIPolicyFactory
from gymforge.tasks import HeldOutError
from gymforge.testing import (
    OpenAITestServer,
    ServedReply,
    ServedToolCall,
    fake_logprob,
    fake_tokenize,
    render_completion,
)
from gymforge.verify import Verdict

HELD = problem_ids("heldout", 1)
TRAIN = problem_ids("train", 1)


class Metrics:
    """A fake TRL ``log_metric``: records every call."""

    def __init__(self) -> None:
        self.calls: dict[str, list[float]] = {}

    def __call__(self, name: str, value: float) -> None:
        self.calls.setdefault(name, []).append(value)


def answer(task_id: str) -> str:
    return DigitsEnv.tasks.resolve(task_id).truth["answer"]


def grade(fn: GymforgeReward, completions: list[Any], ids: list[str], **kw: Any) -> list[Any]:
    seeds = kw.pop("seeds", [3] * len(ids))
    return asyncio.run(fn([""] * len(ids), completions, None, task_id=ids, seed=seeds, **kw))


# ---- reward_funcs -------------------------------------------------------------------------
def test_reward_is_the_envs_own_reward_and_components_are_logged() -> None:
    (fn,) = reward_funcs(DigitsEnv)
    assert fn.__name__ == "gymforge_reward"
    assert inspect.iscoroutinefunction(type(fn).__call__)  # TRL gathers async reward funcs
    ids = TRAIN[:4]
    completions = [answer(ids[0]), " " + answer(ids[1]) + "\n", "x", answer(ids[3]) + "1"]
    metrics = Metrics()
    rewards = grade(fn, completions, ids, log_metric=metrics)
    assert rewards == pytest.approx([1.09, 1.09, -0.01, 0.09])
    assert set(metrics.calls) == {
        "gymforge/task",
        "gymforge/format",
        "gymforge/step_cost",
        "gymforge/success",
        "gymforge/unfinished",
    }
    assert metrics.calls["gymforge/task"] == [0.5]
    assert metrics.calls["gymforge/format"] == pytest.approx([0.075])
    assert metrics.calls["gymforge/success"] == [0.5]
    assert metrics.calls["gymforge/unfinished"] == [0.0]

    async def direct(task_id: str, text: str) -> float:  # the env's own path, by hand
        env = DigitsEnv()
        await env.reset(task_id, 3)
        return (await env.step(Reply(text=text))).reward

    assert rewards == [asyncio.run(direct(t, c)) for t, c in zip(ids, completions, strict=True)]


def test_reward_reads_chat_completions_and_needs_the_columns() -> None:
    fn = GymforgeReward(DigitsEnv)
    chat = [[{"role": "assistant", "content": answer(TRAIN[5])}]]
    assert grade(fn, chat, TRAIN[5:6]) == pytest.approx([1.09])
    with pytest.raises(UserError, match="task_id and seed"):
        asyncio.run(fn(["p"], ["1"], None))


def test_rollout_rewards_are_passed_through_not_graded_again() -> None:
    fn = GymforgeReward(DigitsEnv)
    metrics = Metrics()
    out = asyncio.run(
        fn(
            ["p", "p"],
            ["anything", "at all"],
            None,
            env_reward=[0.5, -0.25],
            env_reward_components=[{"task": 0.5}, {"step_cost": -0.25}],
            env_success=[True, False],
            log_metric=metrics,
        )
    )
    assert out == [0.5, -0.25]
    assert metrics.calls["gymforge/task"] == [0.25]
    assert metrics.calls["gymforge/success"] == [0.5]


class SlowDigits(DigitsEnv):
    """Verification that waits on something else (a sandbox, a pool); it counts how many
    verifications are waiting at once."""

    in_flight = 0
    peak = 0

    async def verify(self, task: Task, world: Any, reply: str) -> Verdict:
        cls = type(self)
        cls.in_flight += 1
        cls.peak = max(cls.peak, cls.in_flight)
        try:
            await asyncio.sleep(0.05)
        finally:
            cls.in_flight -= 1
        return super().verify(task, world, reply)


def test_grading_runs_concurrently() -> None:
    SlowDigits.peak = 0
    fn = GymforgeReward(SlowDigits, concurrency=16)
    ids = TRAIN[:16]
    rewards = grade(fn, [answer(t) for t in ids], ids)
    assert rewards == pytest.approx([1.09] * 16)
    assert SlowDigits.peak == 16  # all sixteen waited at once; serial grading peaks at 1


# ---- dataset export -----------------------------------------------------------------------
def test_train_export_has_no_heldout_task_and_refuses_one() -> None:
    rows = task_rows(DigitsEnv, 60, seed=4, split="train", prompt_format="text")
    assert len(rows) == 60
    assert {r["split"] for r in rows} == {"train"}
    assert all(DigitsEnv.tasks.resolve(r["task_id"]).split == "train" for r in rows)
    first = rows[0]
    assert set(first) == {"prompt", "task_id", "seed", "family", "difficulty", "split", "env_id"}
    assert first["prompt"] == DigitsEnv.tasks.resolve(first["task_id"]).prompt
    assert first["family"] == "digits.sum" and first["env_id"] == "digits"
    with pytest.raises(HeldOutError):
        task_rows(DigitsEnv, task_ids=[TRAIN[0], HELD[0]], split="train")


def test_heldout_export_for_eval_and_chat_prompts() -> None:
    rows = task_rows(DigitsEnv, task_ids=HELD, split="heldout")
    assert [r["task_id"] for r in rows] == HELD
    assert rows[0]["prompt"] == [{"role": "user", "content": "1+0="}]
    with pytest.raises(UserError, match="not held out"):
        task_rows(DigitsEnv, task_ids=TRAIN[:1], split="heldout")
    ledger = task_rows(LedgerEnv, 2, split="train")
    assert [m["role"] for m in ledger[0]["prompt"]] == ["system", "user"]


def test_task_dataset_is_a_datasets_dataset() -> None:
    pytest.importorskip("datasets")
    from gymforge.integrations.trl import task_dataset

    ds = task_dataset(DigitsEnv, 8, split="train", prompt_format="text")
    assert len(ds) == 8
    assert {"prompt", "task_id", "seed", "family", "difficulty"} <= set(ds.column_names)


# ---- rollout_func -------------------------------------------------------------------------
class TokenOracle(OraclePolicy):
    """The oracle dressed as a model server with a prefix-stable template: made-up ids."""

    name = checkpoint = "token-oracle"

    async def start(self, ctx: EpisodeContext) -> None:
        await super().start(ctx)
        self.context, self.turn = [1, 2, 3], 0

    async def act(self, observation: Observation) -> PolicyTurn:
        action = (await super().act(observation)).action
        self.turn += 1
        self.context += [100 + self.turn] * max(1, observation.tokens)
        prompt = list(self.context)
        completion = [500 + self.turn, 600 + self.turn]
        self.context += completion
        return CapturedTurn(
            action,
            capture_level="tokens",
            prompt_token_ids=prompt,
            completion_token_ids=completion,
            logprobs=[-0.5, -0.25],
        )


def ledger_rows(n: int) -> list[dict[str, Any]]:
    return task_rows(LedgerEnv, n, seed=2, split="train", difficulties=[1])


def test_rollout_func_shapes_masks_and_env_reward() -> None:
    rows = ledger_rows(3)
    G = 2
    prompts = [r["prompt"] for r in rows for _ in range(G)]
    rollout = GymforgeRollout(LedgerEnv, rows, policy=TokenOracle, concurrency=4)
    out = rollout(prompts, None)
    rollout.close()
    assert set(out) >= {"prompt_ids", "completion_ids", "logprobs", "env_mask", "env_reward"}
    assert all(len(v) == len(prompts) for v in out.values())
    for ids, mask, lps, prompt_ids in zip(
        out["completion_ids"], out["env_mask"], out["logprobs"], out["prompt_ids"], strict=True
    ):
        assert len(ids) == len(mask) == len(lps)
        assert prompt_ids[:3] == [1, 2, 3]
        model = [t for t, m in zip(ids, mask, strict=True) if m]
        turns = len(model) // 2
        assert turns >= 4  # search, list, transfer..., reply: multi-turn
        assert model == [t for k in range(1, turns + 1) for t in (500 + k, 600 + k)]
        assert 0 in mask  # environment tokens between turns are masked out
        assert all(lp == 0.0 for lp, m in zip(lps, mask, strict=True) if not m)
    assert out["env_success"] == [True] * 6
    assert all(r > 0.9 for r in out["env_reward"])
    assert all("task" in c for c in out["env_reward_components"])


def test_rollout_func_refuses_unknown_prompts_and_text_capture() -> None:
    rows = ledger_rows(1)
    rollout = GymforgeRollout(LedgerEnv, rows, policy=TokenOracle)
    with pytest.raises(UserError, match="none of its rows"):
        rollout([[{"role": "user", "content": "never exported"}]], None)
    scripted = GymforgeRollout(LedgerEnv, rows, policy=OraclePolicy)
    with pytest.raises(UserError, match="below_tokens_capture"):
        scripted([rows[0]["prompt"]], None)
    rollout.close()
    scripted.close()


class DriftingTokenOracle(TokenOracle):
    """Like TokenOracle, but the episodes of odd sampling seeds re-tokenise their context
    on turn 2 (as a chat server does), so their prompts stop extending the last turn."""

    async def start(self, ctx: EpisodeContext) -> None:
        await super().start(ctx)
        self.drift = ctx.rollout % 2 == 1

    async def act(self, observation: Observation) -> PolicyTurn:
        turn = await super().act(observation)
        if self.drift and self.turn == 2:
            assert turn.prompt_token_ids is not None
            prompt = [9, *turn.prompt_token_ids[1:]]
            return dataclasses.replace(turn, prompt_token_ids=prompt)
        return turn


class ShortLogprobsOracle(TokenOracle):
    """Like TokenOracle, but the episodes of odd sampling seeds get one logprob too few on
    turn 2 (which token each belongs to is unknown: the episode cannot be trained on)."""

    async def start(self, ctx: EpisodeContext) -> None:
        await super().start(ctx)
        self.short = ctx.rollout % 2 == 1

    async def act(self, observation: Observation) -> PolicyTurn:
        turn = await super().act(observation)
        if self.short and self.turn == 2:
            assert turn.logprobs is not None
            return dataclasses.replace(turn, logprobs=turn.logprobs[:-1])
        return turn


class MetricLog:
    def __init__(self) -> None:
        self.values: dict[str, list[float]] = {}

    def _log_metric(self, name: str, value: float) -> None:  # TRL's hook for log_metric
        self.values.setdefault(name, []).append(value)


def test_rollout_func_skips_bad_episodes_with_placeholders_and_metrics() -> None:
    rows = ledger_rows(2)
    prompts = [r["prompt"] for r in rows for _ in range(4)]
    rollout = GymforgeRollout(LedgerEnv, rows, policy=ShortLogprobsOracle, concurrency=4)
    trainer = MetricLog()
    out = rollout(prompts, trainer)
    rollout.close()
    assert all(len(v) == len(prompts) for v in out.values())
    refused = [i for i, r in enumerate(out["env_refused"]) if r is not None]
    assert refused == [1, 3, 5, 7]
    assert {out["env_refused"][i] for i in refused} == {"logprobs_length_mismatch"}
    for i in refused:  # well-formed rows that train nothing and have no reward
        assert out["env_mask"][i] == [0] and len(out["completion_ids"][i]) == 1
        assert out["prompt_ids"][i][:1] == [1] and out["env_reward"][i] is None
    for i in set(range(8)) - set(refused):
        assert out["env_refused"][i] is None and out["env_reward"][i] > 0.9
    reason = "gymforge/refused/logprobs_length_mismatch"
    assert trainer.values == {"gymforge/refused": [4.0], reason: [4.0]}
    assert rollout.refused == {"logprobs_length_mismatch": 4}

    # the reward function gives placeholders None: TRL leaves them out of the group statistics
    reward = GymforgeReward(LedgerEnv)
    logged: dict[str, float] = {}
    got = asyncio.run(
        reward(
            prompts,
            [""] * 8,
            None,
            env_reward=out["env_reward"],
            env_reward_components=out["env_reward_components"],
            env_success=out["env_success"],
            log_metric=logged.__setitem__,
        )
    )
    assert [g is None for g in got] == [i in refused for i in range(8)]
    assert logged["gymforge/success"] == 1.0  # the mean over the episodes actually played


def test_rollout_func_errors_only_when_every_episode_is_refused() -> None:
    rows = ledger_rows(1)

    class AlwaysShort(ShortLogprobsOracle):
        async def start(self, ctx: EpisodeContext) -> None:
            await super().start(ctx)
            self.short = True

    rollout = GymforgeRollout(LedgerEnv, rows, policy=AlwaysShort)
    with pytest.raises(UserError, match=r"every episode of the batch \(2\).*logprobs_length"):
        rollout([rows[0]["prompt"]] * 2, None)
    rollout.close()


def test_rollout_func_trains_an_inexact_episode_as_far_as_it_is_exact() -> None:
    # a prompt that stops extending the last turn (a chat server's re-tokenisation) cuts the
    # row there: the exact turns before it, the episode's reward, in its group's statistics
    rows = ledger_rows(1)
    rollout = GymforgeRollout(LedgerEnv, rows, policy=DriftingTokenOracle, concurrency=2)
    trainer = MetricLog()
    out = rollout([rows[0]["prompt"]] * 2, trainer)
    rollout.close()
    assert out["env_refused"] == [None, None]
    whole, cut = out["completion_ids"]
    model = [t for t, m in zip(cut, out["env_mask"][1], strict=True) if m]
    assert model == [501, 601] and len(whole) > len(cut)
    assert out["env_reward"][1] == out["env_reward"][0] > 0.9  # the drift: only the tokens
    assert trainer.values == {
        "gymforge/refused": [0.0],
        "gymforge/cut": [1.0],
        "gymforge/cut/prefix_mismatch": [1.0],
    }
    assert rollout.cut == {"prefix_mismatch": 1}


def served(action: Action) -> ServedReply:
    if isinstance(action, ToolCall):
        return ServedReply(tool_calls=(ServedToolCall(action.name, dict(action.arguments)),))
    assert isinstance(action, Reply)
    return ServedReply(content=action.text)


def ledger_responder(rows: list[dict[str, Any]]) -> Callable[[dict[str, Any]], ServedReply]:
    env = LedgerEnv()
    plans = {}
    for row in rows:
        task = env.tasks.resolve(row["task_id"])
        plans[task.prompt] = [served(a) for a in env.oracle_plan(task)]

    def respond(request: dict[str, Any]) -> ServedReply:
        prompt = next(m["content"] for m in request["messages"] if m["role"] == "user")
        k = sum(m["role"] == "assistant" for m in request["messages"])
        return plans[prompt][min(k, len(plans[prompt]) - 1)]

    return respond


def test_rollout_func_against_an_openai_compatible_server() -> None:
    rows = ledger_rows(2)
    prompts = [r["prompt"] for r in rows for _ in range(2)]
    with OpenAITestServer(ledger_responder(rows)) as srv:
        trainer = SimpleNamespace(  # what server_policy_for reads from a GRPOTrainer
            args=SimpleNamespace(
                vllm_server_base_url=srv.base_url.removesuffix("/v1"),
                temperature=0.9,
                top_p=None,
                top_k=None,
                max_completion_length=256,
            ),
            state=SimpleNamespace(global_step=12),
            model=SimpleNamespace(config=SimpleNamespace(_name_or_path="tiny")),
            processing_class=SimpleNamespace(eos_token_id=0),
        )
        rollout = GymforgeRollout(LedgerEnv, rows, concurrency=4, policy_kind="openai")
        out = rollout(prompts, trainer)
        rollout.close()
        requests = list(srv.requests)
    assert requests and all(r["return_token_ids"] and r["logprobs"] for r in requests)
    assert {r["model"] for r in requests} == {"tiny"}
    assert {r["temperature"] for r in requests} == {0.9}
    assert out["env_success"] == [True] * 4
    for ids, mask, lps in zip(out["completion_ids"], out["env_mask"], out["logprobs"], strict=True):
        assert len(ids) == len(mask) == len(lps) and 0 in mask
        # the first model segment is exactly the server's tokens of its first reply
        first = ids[: mask.index(0)]
        assert bytes(first).decode().startswith("<tool_call>")
        assert lps[: len(first)] == [fake_logprob(t, i) for i, t in enumerate(first)]
    final = fake_tokenize(render_completion("All transfers are done."))  # the oracle's reply
    assert all(ids[-len(final) :] == final for ids in out["completion_ids"])


def test_default_policy_targets_the_trainers_vllm_server() -> None:
    trainer = SimpleNamespace(
        args=SimpleNamespace(
            vllm_server_base_url=None,
            vllm_server_host="127.0.0.1",
            vllm_server_port=8123,
            temperature=1.0,
            top_p=0.9,
            top_k=20,
            max_completion_length=64,
        ),
        state=SimpleNamespace(global_step=3),
        vllm_generation=SimpleNamespace(vllm_client=SimpleNamespace(model="served-model")),
    )
    factory = server_policy_for(trainer, policy_kind="openai")
    assert isinstance(factory, OpenAIPolicyFactory)
    assert factory.base_url == "http://127.0.0.1:8123/v1" and factory.model == "served-model"
    assert factory.sampling.max_tokens == 64 and factory.sampling.extra_body == {"top_k": 20}
    assert factory.current_weight_version() == "3"
    trainer.state.global_step = 4
    assert factory.current_weight_version() == "4"


# ---- environment_factory ------------------------------------------------------------------
def test_environment_class_shape() -> None:
    cls = environment_class(LedgerEnv)
    public = {n for n, _ in inspect.getmembers(cls, inspect.isfunction) if not n.startswith("_")}
    assert public == {"reset", "get_reward", "search_customers", "list_accounts", "transfer"}
    transfer = cls.transfer
    hints = typing.get_type_hints(transfer)
    assert hints == {"from_account": str, "to_account": str, "amount_cents": int, "return": str}
    params = list(inspect.signature(transfer).parameters)
    assert params == ["self", "from_account", "to_account", "amount_cents"]
    for name in ("search_customers", "list_accounts", "transfer"):
        doc = inspect.getdoc(getattr(cls, name))
        assert doc and "Args:" in doc and "Returns:" in doc
        for arg in inspect.signature(getattr(cls, name)).parameters:
            if arg != "self":
                assert f"    {arg}: " in getattr(cls, name).__doc__
    assert typing.get_type_hints(cls.reset)["return"] == str | None
    assert typing.get_type_hints(cls.get_reward)["return"] is float


def test_environment_class_schema_is_what_transformers_builds() -> None:
    pytest.importorskip("transformers")
    from transformers.utils import get_json_schema

    env = environment_class(LedgerEnv)()
    schema = get_json_schema(env.transfer)
    fn = schema["function"]
    assert fn["name"] == "transfer"
    assert fn["parameters"]["properties"]["amount_cents"]["type"] == "integer"
    assert set(fn["parameters"]["required"]) == {"from_account", "to_account", "amount_cents"}


def test_environment_class_plays_an_episode_through_the_env() -> None:
    row = ledger_rows(1)[0]
    env = environment_class(LedgerEnv)()
    assert env.reset(**row) is None  # the dataset prompt already holds the observation
    text = env.reset(**{**row, "prompt": ""})  # no prompt: the env's text is returned
    assert text and "transfer" in text
    plan = LedgerEnv().oracle_plan(LedgerEnv.tasks.resolve(row["task_id"]))
    for action in plan:
        if isinstance(action, ToolCall):
            reply = getattr(env, action.name)(**action.arguments)
            assert isinstance(reply, str) and reply
    assert json.loads(env.search_customers(name="zzz-nobody")) == {"ok": True, "result": []}
    assert env.get_reward() > 0.9
    assert env._success()
    assert env.list_accounts(customer_id="C100").startswith("The episode has ended")


def test_submit_final_replies_lets_get_reward_judge_the_answer() -> None:
    cls = environment_class(DigitsEnv)
    public = {n for n, _ in inspect.getmembers(cls, inspect.isfunction) if not n.startswith("_")}
    assert public == {"reset", "get_reward"}
    envs = [cls(), cls()]
    for env, task_id in zip(envs, TRAIN[:2], strict=True):
        env.reset(task_id=task_id, seed=1, prompt="x")
    completions = [[{"role": "assistant", "content": answer(TRAIN[0])}], "wrong"]
    metrics = Metrics()
    out = submit_final_replies(["x", "x"], completions, environments=envs, log_metric=metrics)
    assert out == [0.0, 0.0]
    assert [e.get_reward() for e in envs] == pytest.approx([1.09, -0.01])
    assert metrics.calls["gymforge/success"] == [0.5]
    unanswered = cls()
    unanswered.reset(task_id=TRAIN[0], seed=1, prompt="x")
    assert unanswered.get_reward() == pytest.approx(-0.01)  # empty final reply


def test_environment_class_refuses_reserved_tool_names() -> None:
    from gymforge.tools import tool

    class Clash(DigitsEnv):
        @tool
        def reset_world(self) -> str:
            """Fine name."""
            return ""

    assert "reset_world" in dir(environment_class(Clash))

    class Bad(DigitsEnv):
        @tool(name="get_reward")
        def grab(self) -> float:
            """Clashes with TRL's reward hook."""
            return 1.0

    with pytest.raises(UserError, match="get_reward"):
        environment_class(Bad)
