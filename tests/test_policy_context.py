"""What a policy is given at the start of an episode, and what a step records of its turn.

``core.policy.episode_context`` is the one place a context is built: a model policy gets the
public ``EpisodeContext`` (task, seeds, the environment's token budget and counter), a policy
that declares ``scripted = True`` a ``ScriptedContext`` with the environment. The policy record
of a step (``rollout.capture.turn_record``) keeps the keys it always had."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from gymforge.core.env import Environment
from gymforge.core.episode import Budget
from gymforge.core.errors import UserError
from gymforge.core.policy import (
    EpisodeContext,
    PolicyTurn,
    ScriptedContext,
    episode_context,
    scripted_env,
)
from gymforge.core.tokens import ApproxTokenCounter
from gymforge.core.types import Reply, ToolCall
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout import CapturedTurn, OraclePolicy, RandomPolicy, turn_record
from gymforge.rollout.skilled import SkilledPolicy
from gymforge.trajectory.schema import PolicyRecord


class ModelStyle:
    name = checkpoint = "model"


class ClaimsScripted:
    name = checkpoint = "truthy"
    scripted = 1  # truthy but not True: not a declaration


class BudgetedLedger(LedgerEnv):
    budget = Budget(max_steps=16, max_tokens=777)


def test_a_model_policy_gets_the_public_context_with_the_budget_and_counter() -> None:
    env = BudgetedLedger(token_counter=ApproxTokenCounter())
    ctx = episode_context(ModelStyle(), env, "t", 3, sampling_seed=5, rollout=2)
    assert type(ctx) is EpisodeContext
    assert (ctx.task_id, ctx.seed, ctx.sampling_seed, ctx.rollout) == ("t", 3, 5, 2)
    assert ctx.max_tokens == 777
    assert ctx.token_counter is env.token_counter
    assert not hasattr(ctx, "env")


@pytest.mark.parametrize("policy", [OraclePolicy(), RandomPolicy(), SkilledPolicy(0.5)])
def test_a_scripted_policy_gets_the_environment(policy: Any) -> None:
    env = LedgerEnv()
    ctx = episode_context(policy, env, "t", 0)
    assert isinstance(ctx, ScriptedContext)
    assert scripted_env(ctx, "x") is env


def test_only_scripted_true_is_a_declaration() -> None:
    assert type(episode_context(ClaimsScripted(), LedgerEnv(), "t", 0)) is EpisodeContext


def test_a_scripted_policy_started_with_a_public_context_is_refused_by_name() -> None:
    with pytest.raises(UserError, match=r"the oracle policy .* declare scripted = True"):
        asyncio.run(OraclePolicy().start(EpisodeContext("t", 0)))


def test_the_environment_cannot_be_passed_where_the_old_context_took_it() -> None:
    """``EpisodeContext(task_id, seed, env)`` was the old call; it must not silently bind the
    environment to ``sampling_seed``."""
    env: Environment = LedgerEnv()
    with pytest.raises(TypeError):
        EpisodeContext("t", 0, env)  # type: ignore[misc]


def test_a_scripted_turn_records_every_capture_field_as_none() -> None:
    record = turn_record(PolicyTurn(Reply(text="done")))
    assert record == {
        "capture_level": "none",
        "text": None,
        "tool_calls": None,
        "tool_format": None,
        "prompt_token_ids": None,
        "completion_token_ids": None,
        "logprobs": None,
        "finish_reason": None,
        "model": None,
        "weight_version": None,
    }
    assert set(record) == set(PolicyRecord.model_fields) - {"model_turns"}


def test_a_captured_turn_records_its_capture_verbatim_in_the_old_key_order() -> None:
    turn = CapturedTurn(
        ToolCall(name="f", arguments={}, call_id="c"),
        capture_level="tokens",
        text="<tool_call>",
        tool_format="hermes",
        prompt_token_ids=[1, 2],
        completion_token_ids=[3],
        logprobs=[-0.5],
        finish_reason="stop",
        model="m",
        weight_version="7",
    )
    record = turn_record(turn)
    assert list(record) == [
        "capture_level",
        "text",
        "tool_calls",
        "tool_format",
        "prompt_token_ids",
        "completion_token_ids",
        "logprobs",
        "finish_reason",
        "model",
        "weight_version",
    ]
    assert PolicyRecord.model_validate(record).model_dump() == {**record, "model_turns": None}
    harness = turn_record(CapturedTurn(Reply(text=""), model_turns=[{"branch": 0}]))
    assert harness["model_turns"] == [{"branch": 0}]
