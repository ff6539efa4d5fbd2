"""OpenAIPolicy through the real openai SDK against the local OpenAI-compatible server."""

from __future__ import annotations

import pickle
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from openai_helpers import arun

from gymforge.core.errors import InfraError, PolicyError, UserError
from gymforge.core.policy import EpisodeContext, PolicyTurn, episode_context
from gymforge.core.types import Invalid, Message, Observation, Reply, ToolCall
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout.context_full import prompt_tokens
from gymforge.rollout.openai_policy import (
    ContextLengthExceeded,
    OpenAIPolicyFactory,
    PolicyRequestRejected,
    PolicyServerError,
    Retry,
    Sampling,
    make_openai_policy_factory,
)
from gymforge.testing import (
    OpenAITestServer,
    ServedError,
    ServedReply,
    ServedToolCall,
    fake_logprob,
    fake_tokenize,
    render_completion,
    render_prompt,
    scripted_responder,
)

TOOLS = ({"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}},)
RESET = Observation(
    messages=(Message(role="system", content="Be brief."), Message(role="user", content="Hi ü")),
    tools=TOOLS,
)
Factory = Callable[..., OpenAIPolicyFactory]


def ctx(sampling_seed: int = 0) -> EpisodeContext:
    """A model policy's context for an episode of the ledger (its budget, its counter)."""
    return episode_context(None, LedgerEnv(), "t/v1/d1/s1", 3, sampling_seed=sampling_seed)


def play(
    factory: OpenAIPolicyFactory,
    observations: Sequence[Observation | Callable[[PolicyTurn], Observation]],
    sampling_seed: int = 0,
    between: Callable[[int], None] | None = None,
) -> list[PolicyTurn]:
    """One episode's turns; an observation may be computed from the previous turn."""

    async def go() -> list[PolicyTurn]:
        policy = factory()
        try:
            await policy.start(ctx(sampling_seed))
            turns: list[PolicyTurn] = []
            for i, obs in enumerate(observations):
                if between is not None:
                    between(i)
                o = obs(turns[-1]) if callable(obs) else obs
                turns.append(await policy.act(o))
            return turns
        finally:
            await factory.aclose()

    return arun(go())


def tool_result(turn: PolicyTurn) -> Observation:
    assert isinstance(turn.action, ToolCall)
    msg = Message(role="tool", content='{"ok":true}', name="f", tool_call_id=turn.action.call_id)
    return Observation(messages=(msg,))


@pytest.mark.parametrize("transport", ["httpx", "aiohttp"])
@pytest.mark.parametrize("request_path", ["fast", "typed", "lean"])
def test_tokens_recorded_exactly_as_served(
    server: OpenAITestServer, make_factory: Factory, transport: str, request_path: str
) -> None:
    call = ServedToolCall("f", {"q": "ü"})
    server.responder = scripted_responder([ServedReply(content="ok", tool_calls=(call,))])
    factory = make_factory(transport=transport, request_path=request_path, weight_version="w1")
    (turn,) = play(factory, [RESET])
    request = server.requests[-1]
    served_calls = [{"function": {"name": "f", "arguments": '{"q": "ü"}'}}]
    completion = fake_tokenize(render_completion("ok", served_calls))
    assert turn.prompt_token_ids == fake_tokenize(render_prompt(request["messages"], TOOLS))
    assert turn.completion_token_ids == completion
    assert turn.logprobs == [fake_logprob(t, i) for i, t in enumerate(completion)]
    assert (turn.capture_level, turn.finish_reason, turn.model) == (
        "tokens",
        "tool_calls",
        "test-model",
    )
    assert turn.weight_version == "w1" and turn.text == "ok"
    assert isinstance(turn.action, ToolCall) and turn.action.arguments == {"q": "ü"}
    assert turn.action.call_id.startswith("chatcmpl-tool-")


def test_request_carries_sampling_seed_and_capture_flags(
    server: OpenAITestServer, make_factory: Factory
) -> None:
    sampling = Sampling(
        temperature=0.5, top_p=0.9, max_tokens=64, stop=("</s>",), top_logprobs=2,
        extra_body={"top_k": 20},
    )  # fmt: skip
    play(make_factory(sampling=sampling), [RESET], sampling_seed=1234)
    req = server.requests[-1]
    expected = {
        "model": "test-model",
        "seed": 1234,
        "temperature": 0.5,
        "top_p": 0.9,
        "max_tokens": 64,
        "stop": ["</s>"],
        "logprobs": True,
        "top_logprobs": 2,
        "return_token_ids": True,
        "top_k": 20,
        "tools": list(TOOLS),
    }
    assert {k: req.get(k) for k in expected} == expected
    assert "parallel_tool_calls" not in req  # off by default: it turns on vLLM's grammar
    assert req["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi ü"},
    ]


def test_parallel_tool_calls_is_an_explicit_opt_in(
    server: OpenAITestServer, make_factory: Factory
) -> None:
    play(make_factory(sampling=Sampling(parallel_tool_calls=False)), [RESET])
    assert server.requests[-1]["parallel_tool_calls"] is False


@pytest.mark.parametrize(
    ("message", "tokens"),
    [
        (
            "This model's maximum context length is 2048 tokens. However, your prompt contains"
            " at least 2049 input tokens, which exceeds this limit even without any output"
            " tokens. Please reduce the length of the input prompt.",
            2049,
        ),
        (
            "This model's maximum context length is 2048 tokens. However, your prompt contains"
            " 3100 input tokens, which exceeds this limit even without any output tokens.",
            3100,
        ),
        ("... you requested 2100 tokens (2000 in the messages, 100 in the completion).", 2000),
        ("... However, your request has 4097 input tokens. Please reduce ...", 4097),
    ],
)
def test_context_length_wordings_give_the_prompt_token_count(message: str, tokens: int) -> None:
    assert prompt_tokens(message) == tokens


def test_second_request_is_the_exact_transcript(
    server: OpenAITestServer, make_factory: Factory
) -> None:
    server.responder = scripted_responder(
        [ServedReply(tool_calls=(ServedToolCall("f", '{"x":  1}'),)), "Done."]
    )
    first, second = play(make_factory(), [RESET, tool_result])
    assert isinstance(first.action, ToolCall) and second.action == Reply(text="Done.")
    call_id = first.action.call_id
    assert server.requests[1]["messages"][2:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "f", "arguments": '{"x":  1}'},
                }
            ],
        },
        {"role": "tool", "content": '{"ok":true}', "tool_call_id": call_id},
    ]
    # the second prompt's tokens extend the first prompt and completion (same template)
    assert second.prompt_token_ids[: len(first.prompt_token_ids)] == first.prompt_token_ids


def test_text_form_tool_call(server: OpenAITestServer, make_factory: Factory) -> None:
    server.responder = lambda req: 'ok <tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>'
    (turn,) = play(make_factory(), [RESET])
    assert turn.action == ToolCall(name="f", arguments={"a": 1}, call_id="call_1")


def test_malformed_and_multiple_calls_become_invalid(
    server: OpenAITestServer, make_factory: Factory
) -> None:
    two = ServedReply(tool_calls=(ServedToolCall("f"), ServedToolCall("g")))
    server.responder = scripted_responder(
        [ServedReply(tool_calls=(ServedToolCall("f", {"a": 1}),)), two]
    )
    server.inject("malformed")
    hint = Observation(messages=(Message(role="user", content="parse error"),))
    bad, multi = play(make_factory(), [RESET, hint])
    assert isinstance(bad.action, Invalid) and "not valid JSON" in bad.action.error
    assert bad.action.raw == '<tool_call>{"name": "f", "arguments": {"a": 1}</tool_call>'
    assert bad.capture_level == "tokens"  # the tokens of a bad turn are still recorded
    assert isinstance(multi.action, Invalid) and "2 tool calls" in multi.action.error
    assert server.requests[1]["messages"][2:] == [
        {"role": "assistant", "content": bad.action.raw},
        {"role": "user", "content": "parse error"},
    ]


def test_capture_levels_follow_what_the_server_returns(make_factory: Factory) -> None:
    with OpenAITestServer(serve_completion_ids=False) as srv:
        as_ids = Sampling(extra_body={"return_tokens_as_token_ids": True})
        factory = OpenAIPolicyFactory("m", base_url=srv.base_url, sampling=as_ids)
        (turn,) = play(factory, [RESET])
        assert turn.capture_level == "tokens"  # ids from the token_id:<id> logprob tokens
        assert turn.completion_token_ids == fake_tokenize(render_completion(turn.text))
        (turn,) = play(OpenAIPolicyFactory("m", base_url=srv.base_url), [RESET])
        assert turn.capture_level == "logprobs" and turn.completion_token_ids is None
    with OpenAITestServer(serve_prompt_ids=False, serve_completion_ids=False) as srv:
        plain = Sampling(logprobs=False, return_token_ids=False)
        (turn,) = play(OpenAIPolicyFactory("m", base_url=srv.base_url, sampling=plain), [RESET])
        assert (turn.capture_level, turn.logprobs, turn.prompt_token_ids) == ("text", None, None)
        assert "return_token_ids" not in srv.requests[-1] and "logprobs" not in srv.requests[-1]


@pytest.mark.parametrize(
    ("transport", "request_path"), [("httpx", "fast"), ("aiohttp", "fast"), ("httpx", "lean")]
)
def test_retries_transient_failures_then_succeeds(
    server: OpenAITestServer, make_factory: Factory, transport: str, request_path: str
) -> None:
    server.inject("429", "500", "drop", "reset", "503")
    retry = Retry(max_attempts=6, base_delay=0.01)
    factory = make_factory(transport=transport, request_path=request_path, retry=retry)
    (turn,) = play(factory, [RESET])
    assert turn.action == Reply(text="echo: Hi ü")
    assert server.served == {"429": 1, "500": 1, "drop": 1, "reset": 1, "503": 1, "ok": 1}


@pytest.mark.parametrize("request_path", ["fast", "lean"])
def test_exhausted_retries_raise_infra_error(
    server: OpenAITestServer, make_factory: Factory, request_path: str
) -> None:
    server.inject(*["500"] * 3)
    retry = Retry(max_attempts=3, base_delay=0.01)
    with pytest.raises(PolicyServerError, match="failed 3 attempts; last: HTTP 500") as info:
        play(make_factory(request_path=request_path, retry=retry), [RESET])
    assert isinstance(info.value, InfraError) and info.value.retryable
    assert pickle.loads(pickle.dumps(info.value)).status == 500


@pytest.mark.parametrize("request_path", ["fast", "lean"])
def test_dead_server_is_infra_error(
    server: OpenAITestServer, make_factory: Factory, request_path: str
) -> None:
    retry = Retry(max_attempts=2, base_delay=0.01)
    factory = make_factory(request_path=request_path, retry=retry)
    server.stop()
    with pytest.raises(PolicyServerError, match=r"failed 2 attempts.*(Connect|connect)"):
        play(factory, [RESET])
    server.start()  # same port: a restarted server is reachable again
    assert play(factory, [RESET])[0].action == Reply(text="echo: Hi ü")


@pytest.mark.parametrize("request_path", ["fast", "lean"])
def test_per_call_timeout(
    server: OpenAITestServer, make_factory: Factory, request_path: str
) -> None:
    server.latency = 60.0  # the server's stop cancels the sleeping handlers
    retry = Retry(max_attempts=2, base_delay=0.01, call_timeout=0.3)
    factory = make_factory(request_path=request_path, retry=retry)
    t0 = time.perf_counter()
    with pytest.raises(PolicyServerError, match=r"no response within 0\.3 s"):
        play(factory, [RESET])
    assert time.perf_counter() - t0 < 30  # it never waited for a reply (~0.6 s when idle)


@pytest.mark.parametrize("request_path", ["fast", "lean"])
def test_client_errors_are_not_retried(
    server: OpenAITestServer, make_factory: Factory, request_path: str
) -> None:
    def refuse(req: dict[str, Any]) -> str:
        raise ServedError(404, "The model `nope` does not exist.")

    server.responder = refuse
    with pytest.raises(PolicyRequestRejected, match="404") as info:
        play(make_factory(request_path=request_path), [RESET])
    assert len(server.requests) == 1 and not info.value.retryable


@pytest.mark.parametrize("request_path", ["fast", "lean"])
def test_context_length_is_its_own_error(request_path: Any) -> None:
    with OpenAITestServer(max_context=50) as srv:
        factory = OpenAIPolicyFactory("m", base_url=srv.base_url, request_path=request_path)
        with pytest.raises(ContextLengthExceeded, match="maximum context length") as info:
            play(factory, [RESET])
        assert isinstance(info.value, PolicyError) and info.value.prompt_tokens is not None
        assert len(srv.requests) == 1


def test_weight_version_bump_reaches_later_turns(
    server: OpenAITestServer, make_factory: Factory
) -> None:
    server.responder = scripted_responder([ServedReply(tool_calls=(ServedToolCall("f"),))])
    factory = make_factory(weight_version="v1")
    turns = play(
        factory,
        [RESET, tool_result, tool_result],
        between=lambda i: setattr(factory, "weight_version", f"v{i + 1}" if i < 2 else None),
    )
    assert [t.weight_version for t in turns] == ["v1", "v2", None]
    step = iter(range(100))
    factory.weight_version = lambda: str(next(step))  # a callable is read per request
    assert [t.weight_version for t in play(factory, [RESET, tool_result])] == ["0", "1"]


def test_backoff_is_seeded_and_bounded() -> None:
    retry = Retry(base_delay=0.5, max_delay=8.0)
    a = [retry.delay(k, random.Random(7)) for k in range(8)]
    assert a == [retry.delay(k, random.Random(7)) for k in range(8)]
    assert all(0.5 * min(8.0, 0.5 * 2**k) <= d < min(8.0, 0.5 * 2**k) for k, d in enumerate(a))
    assert retry.delay(0, random.Random(1), retry_after=3.0) == 3.0
    assert retry.delay(0, random.Random(1), retry_after=100.0) == 8.0


def test_cli_factory_spec() -> None:
    f = make_openai_policy_factory(
        "openai:org/model:7b", "http://127.0.0.1:1/v1", temperature="0.3", stop="END",
        max_tokens=None, call_timeout=5.0, transport="httpx", checkpoint="ckpt-9",
    )  # fmt: skip
    assert (f.model, f.sampling.temperature, f.sampling.stop) == ("org/model:7b", 0.3, ("END",))
    assert (f.retry.call_timeout, f.transport, f.checkpoint) == (5.0, "httpx", "ckpt-9")
    policy = f()
    assert (policy.name, policy.checkpoint) == ("openai:org/model:7b", "ckpt-9")
    assert pickle.loads(pickle.dumps(f)).model == "org/model:7b"
    for spec in ["oracle", "openai:", "vllm:x"]:
        with pytest.raises(UserError):
            make_openai_policy_factory(spec)
    with pytest.raises(UserError, match="unknown openai policy setting"):
        make_openai_policy_factory("openai:m", tempertaure=1.0)
