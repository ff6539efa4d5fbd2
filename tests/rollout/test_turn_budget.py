"""``max_tokens`` on every request and "the context is full" in every engine's wording, for
both server policies (``openai:`` chat, ``vllm:`` token-in) against the local server.

issue 36, item 7: without ``max_tokens`` vLLM's completions endpoint stops every turn at 16
tokens; a prompt exactly as long as the context was refused with "max_tokens must be at
least 1, got 0", which stopped the whole run instead of truncating that episode.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from openai_helpers import FAST_RETRY, arun, ledger_oracle_responder

from gymforge.core.episode import Budget
from gymforge.core.errors import ContextLengthExceeded, UserError
from gymforge.core.policy import episode_context
from gymforge.core.tokens import ApproxTokenCounter
from gymforge.core.types import Message, Observation
from gymforge.envs.ledger import LedgerEnv
from gymforge.kit.tool_env import action_text
from gymforge.rollout import LocalExecutor, RunSpec
from gymforge.rollout.context_full import is_context_full, room
from gymforge.rollout.openai_policy import OpenAIPolicyFactory
from gymforge.rollout.runner import RunResult, run
from gymforge.rollout.server import PolicyServerError, Sampling, ServerFactory
from gymforge.rollout.vllm_policy import VLLMPolicyFactory
from gymforge.testing.openai_server import (
    CONTEXT_FAULTS,
    VLLM_COMPLETIONS_DEFAULT_MAX_TOKENS,
    OpenAITestServer,
    ServedReply,
    ServedToolCall,
    context_refusal,
    fake_tokenize,
    render_prompt,
    scripted_responder,
)
from gymforge.trajectory.io import read_episodes

TASKS = LedgerEnv.tasks.sample(3, 5, "train", difficulties=[1])
KINDS = ("openai", "vllm")
RESET = Observation(
    messages=(Message(role="system", content="Be brief."), Message(role="user", content="Hi")),
    tokens=9,
)


class BudgetedLedger(LedgerEnv):
    """The ledger with a token budget (the built-in one has only a step budget)."""

    budget = Budget(max_steps=24, max_tokens=6000)


def vllm_like(*args: Any, **kwargs: Any) -> OpenAITestServer:
    """The test server with vLLM's completions default (16 tokens when none is asked)."""
    return OpenAITestServer(
        *args, completions_default=VLLM_COMPLETIONS_DEFAULT_MAX_TOKENS, **kwargs
    )


def make(kind: str, srv: OpenAITestServer, **sampling: Any) -> ServerFactory:
    cls = OpenAIPolicyFactory if kind == "openai" else VLLMPolicyFactory
    return cls("m", base_url=srv.base_url, retry=FAST_RETRY, sampling=Sampling(**sampling))


def play(
    kind: str, srv: OpenAITestServer, out: Path, env: type[LedgerEnv] = LedgerEnv, **sampling: Any
) -> RunResult:
    factory = make(kind, srv, **sampling)

    async def go() -> RunResult:
        try:
            return await run(
                RunSpec(env="ledger", policy=kind, jobs=[(t, 0) for t in TASKS], out=out),
                LocalExecutor(env, factory),
            )
        finally:
            await factory.aclose()

    return arun(go(), 60)


def model_requests(srv: OpenAITestServer) -> list[dict[str, Any]]:
    return [r for r in srv.requests if "prompt" in r or "messages" in r]


# ---- max_tokens is always sent ----------------------------------------------------------
def test_vllm_turns_are_not_cut_at_the_completions_default(tmp_path: Path) -> None:
    """No --max-tokens and no token budget: the bound is the room left in the context."""
    long = ServedReply(content="x" * 40)  # longer than vLLM's default of 16 tokens
    oracle = ledger_oracle_responder(TASKS)

    def respond(req: dict[str, Any]) -> ServedReply:
        reply = oracle(req)
        if reply.tool_calls:
            return reply
        return ServedReply(content=(reply.content or "") + long.content)  # type: ignore[operator]

    with vllm_like(respond, max_context=4000) as srv:
        result = play("vllm", srv, tmp_path)
        sent = model_requests(srv)
    assert not result.errors and all(e["success"] for e in result.episodes)
    assert sent and all(r["max_tokens"] == 4000 - len(r["prompt"]) for r in sent)


@pytest.mark.parametrize("kind", KINDS)
def test_max_tokens_is_the_remaining_token_budget_capped_by_the_flag(
    kind: str, tmp_path: Path
) -> None:
    with vllm_like(ledger_oracle_responder(TASKS)) as srv:
        result = play(kind, srv, tmp_path / "budget", env=BudgetedLedger)
        budgeted = model_requests(srv)
        srv.requests.clear()
        capped = play(kind, srv, tmp_path / "cap", env=BudgetedLedger, max_tokens=40)
        capped_sent = model_requests(srv)
    assert not result.errors and not capped.errors
    # each turn asks for what the budget has left, counted as the environment counts it
    expected = []
    for log in read_episodes(tmp_path / "budget" / "trajectories.jsonl"):
        used = 0
        for prev in log.steps[:-1]:
            used += prev.observation.tokens
            if prev.action is not None:
                used += ApproxTokenCounter().count_text(action_text(prev.action))
            expected.append(6000 - used)
    assert sorted(r["max_tokens"] for r in budgeted) == sorted(expected)
    assert len(set(expected)) > len(TASKS)  # it falls turn by turn
    assert {r["max_tokens"] for r in capped_sent} == {40}


def test_openai_sends_no_max_tokens_when_no_bound_is_known(tmp_path: Path) -> None:
    """Chat endpoints default to the rest of the context: nothing to send."""
    with vllm_like(ledger_oracle_responder(TASKS)) as srv:
        result = play("openai", srv, tmp_path)
        sent = model_requests(srv)
    assert not result.errors and sent and not any("max_tokens" in r for r in sent)


@pytest.mark.parametrize("kind", KINDS)
def test_max_tokens_below_one_is_refused_before_any_episode(kind: str) -> None:
    with vllm_like() as srv, pytest.raises(UserError, match="at least 1"):
        make(kind, srv, max_tokens=0)


# ---- "the context is full" ends that episode, never the run -----------------------------
@pytest.mark.parametrize("fault", sorted(CONTEXT_FAULTS - {"context-too-large"}))
@pytest.mark.parametrize("kind", KINDS)
def test_every_context_full_wording_truncates_only_that_episode(
    kind: str, fault: str, tmp_path: Path
) -> None:
    with vllm_like(ledger_oracle_responder(TASKS)) as srv:
        srv.inject(fault)
        result = play(kind, srv, tmp_path)
    assert not result.errors
    cut = [e for e in result.episodes if e["failure_reason"] == "context_length"]
    assert len(cut) == 1 and cut[0]["truncated"] and not cut[0]["terminated"]
    assert sum(e["success"] for e in result.episodes) == len(TASKS) - 1


@pytest.mark.parametrize("kind", KINDS)
def test_an_ask_larger_than_the_room_left_is_sent_again_with_the_room(
    kind: str, tmp_path: Path
) -> None:
    with vllm_like(ledger_oracle_responder(TASKS)) as srv:
        srv.inject("context-too-large")
        result = play(kind, srv, tmp_path, max_tokens=300)
        sent = model_requests(srv)
    assert not result.errors and all(e["success"] for e in result.episodes)
    assert [r["max_tokens"] for r in sent[:2]] == [300, 299]


def test_vllm_prompt_as_long_as_the_context_is_not_sent(tmp_path: Path) -> None:
    """The prompt fills the context: truncated before any completions request."""
    tools = list(LedgerEnv().toolset.schemas)

    async def first_prompt_length() -> int:
        env = LedgerEnv()
        obs = await env.reset(TASKS[0], 0)
        await env.close()
        messages = [m.model_dump(exclude_none=True) for m in obs.messages]
        return len(fake_tokenize(render_prompt(messages, tools)))

    length = asyncio.run(first_prompt_length())
    with vllm_like(ledger_oracle_responder(TASKS), max_context=length) as srv:
        factory = make("vllm", srv)

        async def go() -> RunResult:
            try:
                return await run(
                    RunSpec(env="ledger", policy="vllm", jobs=[(TASKS[0], 0)], out=tmp_path),
                    LocalExecutor(LedgerEnv, factory),
                )
            finally:
                await factory.aclose()

        result = arun(go(), 60)
        sent = model_requests(srv)
    assert not result.errors and not sent
    (episode,) = result.episodes
    assert episode["truncated"] and episode["failure_reason"] == "context_length"


def test_openai_prompt_exactly_filling_the_context_truncates() -> None:
    """No bound known, so no max_tokens sent: the server's own refusal (vLLM's "max_tokens
    must be at least 1, got 0") is a context-length end, not a rejected request."""
    prompt = len(fake_tokenize(render_prompt([m.model_dump() for m in RESET.messages])))
    with vllm_like(max_context=prompt) as srv:
        factory = make("openai", srv)

        async def go() -> None:
            policy = factory()
            try:
                await policy.start(episode_context(policy, LedgerEnv(), "t", 0))
                await policy.act(RESET)
            finally:
                await factory.aclose()

        with pytest.raises(ContextLengthExceeded, match="at least 1, got 0"):
            arun(go())
        assert len(srv.requests) == 1


def test_the_mock_refuses_a_full_context_in_vllms_words() -> None:
    """The server behind these tests says what vLLM says (so the tests above test that)."""
    import openai

    async def ask(srv: OpenAITestServer, prompt: list[int], **body: Any) -> str:
        client = openai.AsyncOpenAI(base_url=srv.base_url, api_key="x", max_retries=0)
        try:
            await client.completions.create(model="m", prompt=prompt, **body)
        except openai.BadRequestError as err:
            return str(err)
        finally:
            await client.close()
        return "accepted"

    with vllm_like(max_context=8) as srv:
        assert "max_tokens must be at least 1, got 0" in arun(ask(srv, [1] * 8))
        assert "at least 9 input tokens" in arun(ask(srv, [1] * 9))
        assert "is too large: 5" in arun(ask(srv, [1] * 6, max_tokens=5))
        assert arun(ask(srv, [1] * 6, max_tokens=2)) == "accepted"


@pytest.mark.parametrize("fault", sorted(CONTEXT_FAULTS))
def test_each_mock_wording_is_recognised_in_one_place(fault: str) -> None:
    message, code = context_refusal(fault, 100, 20)
    assert is_context_full(400, message, code)
    assert not is_context_full(400, "The model `m` does not exist.", None)


@pytest.mark.parametrize(
    ("message", "left"),
    [
        ("'max_tokens' or 'max_completion_tokens' is too large: 300. This model's maximum "
         "context length is 4096 tokens and your request has 3900 input tokens "
         "(300 > 4096 - 3900).", 196),
        ("This model's maximum context length is 2048 tokens. However, you requested 2100 "
         "tokens (2000 in the messages, 100 in the completion).", 48),
        ("This model's maximum context length is 2048 tokens. However, your prompt contains "
         "at least 2049 input tokens, which exceeds this limit.", -1),
        ("max_tokens must be at least 1, got 0.", None),
    ],
)  # fmt: skip
def test_room_is_read_from_the_refusal(message: str, left: int | None) -> None:
    assert is_context_full(400, message) and room(message) == left


# ---- a turn asked again after its request failed ----------------------------------------
TOOL = {
    "type": "function",
    "function": {"name": "f", "description": "d", "parameters": {"type": "object"}},
}
CALL = ServedReply(tool_calls=(ServedToolCall("f", {"x": 1}),))
TOOL_RESULT = Observation(
    messages=(Message(role="tool", content='{"ok": true}', tool_call_id="call_1"),), tokens=7
)


def second_request(kind: str, failed: bool) -> dict[str, Any]:
    """The request of an episode's second turn under a token budget, asked again after
    every attempt at it failed when ``failed``."""
    with vllm_like(scripted_responder([CALL, "done"])) as srv:
        made = make(kind, srv)

        async def go() -> None:
            policy = made()
            await policy.start(episode_context(policy, BudgetedLedger(), TASKS[0], 0))
            try:
                await policy.act(Observation(messages=RESET.messages, tools=(TOOL,), tokens=9))
                if failed:  # the turn's attempts, then the first prompt's, asked for one token
                    srv.inject(*["500"] * FAST_RETRY.max_attempts * 2)
                    with pytest.raises(PolicyServerError):
                        await policy.act(TOOL_RESULT)
                await policy.act(TOOL_RESULT)
            finally:
                await made.aclose()

        arun(go())
        return model_requests(srv)[-1]


@pytest.mark.parametrize("kind", KINDS)
def test_a_turn_asked_again_after_its_request_failed_is_the_turn_that_never_failed(
    kind: str,
) -> None:
    """A caller may ask for a turn again once its request failed on every attempt: the
    request is the one a policy that never failed sends, the observation counted once
    against the token budget (``max_tokens``) and, in a chat transcript, its messages
    sent once."""
    again, once = second_request(kind, True), second_request(kind, False)
    assert again["max_tokens"] == once["max_tokens"]
    assert again == once
