"""``gymforge proxy`` against the real test server, driven by the real ``openai`` SDK: exact
tokens per episode, token-in continuation, streaming, branches, auth and limits."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from gymforge.core.errors import UserError
from gymforge.serve.proxy import sse
from gymforge.serve.proxy.server import ProxyConfig, ProxyServer
from gymforge.serve.proxy.transcript import normal_message
from gymforge.testing.openai_server import OpenAITestServer
from gymforge.testing.openai_server.fake import (
    ServedReply,
    ServedToolCall,
    fake_tokenize,
    render_prompt,
    scripted_responder,
)

TOKEN = "proxy-test-token"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Look a customer up.",
            "parameters": {"type": "object", "properties": {"name": {"type": "string"}}},
        },
    }
]
REPLIES = [
    ServedReply(content="Let me look.", tool_calls=(ServedToolCall("lookup", {"name": "Ada"}),)),
    ServedReply(tool_calls=(ServedToolCall("lookup", {"name": "Bob"}),)),
    "Both found.",
]


@pytest.fixture
def upstream() -> Iterator[OpenAITestServer]:
    with OpenAITestServer(scripted_responder(REPLIES)) as server:
        yield server


@pytest.fixture
def proxy(upstream: OpenAITestServer) -> Iterator[ProxyServer]:
    with ProxyServer(ProxyConfig(upstream=upstream.base_url, token=TOKEN)) as p:
        yield p


def client(proxy: ProxyServer, episode: str, key: str = TOKEN) -> openai.OpenAI:
    return openai.OpenAI(base_url=proxy.base_url(episode), api_key=key, max_retries=0)


def first_messages() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are a clerk."},
        {"role": "user", "content": "Find Ada and Bob."},
    ]


def assistant_dict(message: Any) -> dict[str, Any]:
    """The assistant message as a harness appends it to its history."""
    return message.model_dump(exclude_none=True)


def play(c: openai.OpenAI, stream: bool = False) -> list[dict[str, Any]]:
    """A three-turn tool-calling conversation; returns the final history."""
    messages = first_messages()
    for _ in range(3):
        if stream:
            pieces = list(
                c.chat.completions.create(model="m", messages=messages, tools=TOOLS, stream=True)  # type: ignore[call-overload]
            )
            msg = merged_message(pieces)
        else:
            r = c.chat.completions.create(model="m", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
            msg = assistant_dict(r.choices[0].message)
        messages.append(msg)
        for call in msg.get("tool_calls") or []:
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": "found"})
        if not msg.get("tool_calls"):
            break
    return messages


def merged_message(chunks: list[Any]) -> dict[str, Any]:
    data = sse.merge_chunks(ch.model_dump() for ch in chunks)
    msg = {k: v for k, v in data["choices"][0]["message"].items() if v not in (None, [])}
    for call in msg.get("tool_calls") or []:
        call.setdefault("type", "function")
    return msg


def test_pass_through_then_token_in_exact_prompts(
    proxy: ProxyServer, upstream: OpenAITestServer
) -> None:
    url = proxy.open_episode("ep-1")
    assert url == proxy.url + "/e/ep-1/v1"
    history = play(client(proxy, "ep-1"))
    assert history[-1]["content"] == "Both found." and not history[-1].get("tool_calls")
    t = proxy.close_episode("ep-1")
    assert [turn.mode for turn in t.turns] == ["pass-through", "token-in", "token-in"]
    assert t.branches == 1
    for turn in t.turns:
        # each turn's prompt is the canonical rendering of everything before it, so the
        # token-in sequence is exactly the one a full re-render gives with this template
        assert turn.prompt_token_ids == fake_tokenize(render_prompt(turn.messages, TOOLS))
        assert turn.completion_token_ids and turn.logprobs is not None
        assert len(turn.logprobs) == len(turn.completion_token_ids)
        assert turn.capture_level == "tokens"
    # the second and third turns went to the completions endpoint as token ids
    kinds = [("messages" in r and "chat") or "completion" for r in upstream.requests]
    assert kinds.count("completion") == 2
    sent = [r for r in upstream.requests if "prompt" in r]
    assert sent[0]["prompt"] == t.turns[1].prompt_token_ids
    assert t.turns[1].response_message["tool_calls"][0]["function"]["name"] == "lookup"
    assert json.loads(t.turns[1].response_message["tool_calls"][0]["function"]["arguments"]) == {
        "name": "Bob"
    }
    # what the harness was told the tool calls were is what the next prompt renders
    assert history[2]["content"] == "Let me look."
    assert t.turns[2].finish_reason == "stop" and t.turns[1].finish_reason == "tool_calls"


def test_pass_through_response_is_what_the_server_returns(
    proxy: ProxyServer, upstream: OpenAITestServer
) -> None:
    proxy.open_episode("ep-pt")
    via = client(proxy, "ep-pt").chat.completions.create(
        model="m",
        messages=first_messages(),  # type: ignore[arg-type]
        tools=TOOLS,  # type: ignore[arg-type]
    )
    direct = openai.OpenAI(base_url=upstream.base_url, api_key="x").chat.completions.create(
        model="m",
        messages=first_messages(),  # type: ignore[arg-type]
        tools=TOOLS,  # type: ignore[arg-type]
    )
    drop = {"created"}
    assert via.model_dump(exclude=drop) == direct.model_dump(exclude=drop)
    raw = via.model_dump()
    assert "prompt_token_ids" not in raw  # asked by the proxy, not by the harness
    assert raw["choices"][0]["logprobs"] is None


def test_streaming_both_paths(proxy: ProxyServer) -> None:
    proxy.open_episode("ep-s")
    history = play(client(proxy, "ep-s"), stream=True)
    proxy.open_episode("ep-n")
    plain = play(client(proxy, "ep-n"))
    # a streamed conversation says exactly what a plain one does
    assert [normal_message(m) for m in history] == [normal_message(m) for m in plain]
    streamed, unstreamed = proxy.close_episode("ep-s"), proxy.close_episode("ep-n")
    assert [t.mode for t in streamed.turns] == ["pass-through", "token-in", "token-in"]
    assert all(t.stream for t in streamed.turns)
    for a, b in zip(streamed.turns, unstreamed.turns, strict=True):
        assert a.prompt_token_ids == b.prompt_token_ids
        assert a.completion_token_ids == b.completion_token_ids
        assert a.logprobs == b.logprobs


def test_rewritten_history_starts_a_branch(proxy: ProxyServer) -> None:
    proxy.open_episode("ep-b")
    c = client(proxy, "ep-b")
    messages = first_messages()
    r1 = c.chat.completions.create(model="m", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
    summary = [
        {"role": "system", "content": "You are a clerk."},
        {"role": "user", "content": "Summary so far: looked up Ada. Now find Bob."},
    ]
    c.chat.completions.create(model="m", messages=summary, tools=TOOLS)  # type: ignore[arg-type]
    extended = [
        *summary,
        assistant_dict(
            c.chat.completions.create(model="m", messages=summary, tools=TOOLS).choices[0].message
        ),  # type: ignore[arg-type]
    ]
    assert r1.choices[0].message.tool_calls
    t = proxy.transcript("ep-b")
    assert [turn.mode for turn in t.turns] == ["pass-through", "pass-through", "pass-through"]
    assert [turn.branch for turn in t.turns] == [0, 1, 2]  # a repeat does not extend either
    extended.append({"role": "tool", "tool_call_id": "x", "content": "found"})
    c.chat.completions.create(model="m", messages=extended, tools=TOOLS)  # type: ignore[arg-type]
    assert t.turns[-1].mode == "token-in" and t.turns[-1].branch == 2


def test_concurrent_episodes_never_mix(upstream: OpenAITestServer) -> None:
    async def main(proxy: ProxyServer) -> None:
        async def one(i: int) -> None:
            c = openai.AsyncOpenAI(base_url=proxy.base_url(f"ep{i}"), api_key=TOKEN)
            messages: list[dict[str, Any]] = [{"role": "user", "content": f"episode {i}"}]
            for _ in range(3):
                r = await c.chat.completions.create(model="m", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
                msg = assistant_dict(r.choices[0].message)
                messages.append(msg)
                for call in msg.get("tool_calls") or []:
                    messages.append(
                        {"role": "tool", "tool_call_id": call["id"], "content": f"r{i}"}
                    )
            await c.close()

        await asyncio.gather(*(one(i) for i in range(8)))

    with ProxyServer(ProxyConfig(upstream=upstream.base_url, token=TOKEN)) as proxy:
        for i in range(8):
            proxy.open_episode(f"ep{i}")
        asyncio.run(main(proxy))
        for i in range(8):
            t = proxy.close_episode(f"ep{i}")
            assert len(t.turns) == 3 and t.branches == 1
            for turn in t.turns:
                assert turn.messages[0]["content"] == f"episode {i}"
                tool_texts = {m["content"] for m in turn.messages if m["role"] == "tool"}
                assert tool_texts <= {f"r{i}"}


def test_refusals(proxy: ProxyServer, upstream: OpenAITestServer) -> None:
    with pytest.raises(openai.NotFoundError, match="no live episode 'never-opened'") as err:
        client(proxy, "never-opened").chat.completions.create(model="m", messages=first_messages())  # type: ignore[arg-type]
    assert err.value.code == "unknown_episode"
    proxy.open_episode("ep-x")
    proxy.close_episode("ep-x")
    with pytest.raises(openai.NotFoundError, match="no live episode"):
        client(proxy, "ep-x").chat.completions.create(model="m", messages=first_messages())  # type: ignore[arg-type]
    proxy.open_episode("ep-a")
    with pytest.raises(openai.PermissionDeniedError, match="wrong bearer token"):
        client(proxy, "ep-a", key="not-the-token").chat.completions.create(
            model="m", messages=first_messages()
        )  # type: ignore[arg-type]
    with pytest.raises(openai.BadRequestError, match="'messages' must be a list"):
        client(proxy, "ep-a").chat.completions.create(model="m", messages="hi")  # type: ignore[arg-type]
    with pytest.raises(openai.BadRequestError, match="n > 1"):
        client(proxy, "ep-a").chat.completions.create(model="m", messages=first_messages(), n=2)  # type: ignore[arg-type]
    with pytest.raises(UserError, match="already open"):
        proxy.open_episode("ep-a")
    with pytest.raises(UserError, match="must match"):
        proxy.open_episode("../etc")
    assert client(proxy, "ep-a").models.list().data[0].id == upstream.model
    assert proxy.transcript("ep-a").turns == []  # refused requests record nothing


def http(method: str, url: str, body: Any = None, token: str | None = TOKEN) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_control_api_and_limits(upstream: OpenAITestServer) -> None:
    config = ProxyConfig(upstream=upstream.base_url, token=TOKEN, max_episodes=2)
    with ProxyServer(config) as proxy:
        assert http("GET", proxy.url + "/health", token=None)[0] == 200
        assert http("POST", proxy.url + "/episodes", {"episode_id": "a"}, token=None)[0] == 401
        status, opened = http("POST", proxy.url + "/episodes", {"episode_id": "a"})
        assert status == 200 and opened["base_url"] == proxy.base_url("a")
        assert http("POST", proxy.url + "/episodes", {"episode_id": "b"})[0] == 200
        status, body = http("POST", proxy.url + "/episodes", {"episode_id": "c"})
        assert status == 409 and "capacity" in body["error"]["message"]
        assert http("PUT", proxy.url + "/weight_version", {"weight_version": "step-7"})[0] == 200
        client(proxy, "a").chat.completions.create(model="m", messages=first_messages())  # type: ignore[arg-type]
        status, body = http("GET", proxy.url + "/episodes/a")
        assert status == 200 and body["turns"][0]["weight_version"] == "step-7"
        assert body["turns"][0]["capture_level"] == "tokens"
        status, body = http("DELETE", proxy.url + "/episodes/a")
        assert status == 200 and len(body["turns"]) == 1
        assert http("GET", proxy.url + "/episodes/a")[0] == 404
        huge = {"model": "m", "messages": [{"role": "user", "content": "x" * (9 * 2**20)}]}
        status, body = http("POST", proxy.base_url("b") + "/chat/completions", huge)
        assert status == 413
    with pytest.raises(UserError, match="beyond loopback"):
        ProxyConfig(upstream=upstream.base_url, host="0.0.0.0")
    with pytest.raises(UserError, match="http"):
        ProxyConfig(upstream="localhost:8000")


def test_idle_episodes_are_reaped(upstream: OpenAITestServer) -> None:
    config = ProxyConfig(upstream=upstream.base_url, token=TOKEN, idle_timeout=0.2)
    with ProxyServer(config) as proxy:
        proxy.open_episode("idle")
        deadline = time.monotonic() + 30
        while proxy.reaped < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proxy.reaped == 1
        with pytest.raises(UserError, match="no open episode"):
            proxy.transcript("idle")
        with pytest.raises(openai.NotFoundError, match="no live episode"):
            client(proxy, "idle").models.list()


def test_a_request_keeps_its_episode_alive(upstream: OpenAITestServer) -> None:
    with ProxyServer(ProxyConfig(upstream=upstream.base_url, token=TOKEN)) as proxy:
        proxy.open_episode("busy")
        before = proxy._episodes["busy"].last  # the reaper's clock for this episode
        client(proxy, "busy").models.list()
        assert proxy._episodes["busy"].last > before
    with pytest.raises(UserError, match="idle-timeout"):
        ProxyConfig(upstream=upstream.base_url, idle_timeout=0)


def test_plain_upstream_records_text_only() -> None:
    """A server that returns no token ids: every turn passes through, recorded as text;
    nothing is guessed, and no turn claims to extend another."""
    plain = OpenAITestServer(
        scripted_responder(REPLIES),
        token_in=False,
        serve_prompt_ids=False,
        serve_completion_ids=False,
    )
    with plain, ProxyServer(ProxyConfig(upstream=plain.base_url, token=TOKEN)) as proxy:
        proxy.open_episode("ep-plain")
        history = play(client(proxy, "ep-plain"))
        t = proxy.close_episode("ep-plain")
    assert history[-1]["content"] == "Both found."
    assert [turn.mode for turn in t.turns] == ["pass-through"] * 3
    assert [turn.capture_level for turn in t.turns] == ["text"] * 3
    assert [turn.branch for turn in t.turns] == [0, 1, 2]
    assert all(turn.prompt_token_ids is None for turn in t.turns)


def test_upstream_down_is_a_502(upstream: OpenAITestServer) -> None:
    """The harness is told the upstream is unreachable, never where it is (its address, which
    may carry credentials, and where an escaped harness would go); the run is told both."""
    where = upstream.base_url.split("//", 1)[1].split("/", 1)[0]  # host:port
    with ProxyServer(ProxyConfig(upstream=upstream.base_url, token=TOKEN)) as proxy:
        proxy.open_episode("ep-d")
        upstream.stop()
        with pytest.raises(openai.InternalServerError, match="upstream unreachable") as raised:
            client(proxy, "ep-d").chat.completions.create(model="m", messages=first_messages())  # type: ignore[arg-type]
        assert where not in str(raised.value) and where not in raised.value.response.text
        assert proxy.transcript("ep-d").turns == []
        failure = proxy.upstream_failure("ep-d")
    assert failure is not None and failure.startswith("the inference server answered 502: ")


PORT0 = ("--port", "0", "--token", TOKEN)


def test_cli_proxy_process(upstream: OpenAITestServer) -> None:
    """``gymforge proxy`` as its own process: open an episode, chat, read the transcript."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "gymforge.cli", "proxy", "--upstream", upstream.base_url, *PORT0],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()  # bounded: the process prints it once started, or dies
        assert " at http://127.0.0.1:" in line, line + proc.stderr.read()
        url = line.split(" at ", 1)[1].split(" ", 1)[0]
        status, opened = http("POST", url + "/episodes", {"episode_id": "cli-1"})
        assert status == 200
        c = openai.OpenAI(base_url=opened["base_url"], api_key=TOKEN, max_retries=0)
        c.chat.completions.create(model="m", messages=first_messages(), tools=TOOLS)  # type: ignore[arg-type]
        status, transcript = http("DELETE", url + "/episodes/cli-1")
        assert status == 200 and transcript["turns"][0]["mode"] == "pass-through"
        assert transcript["turns"][0]["prompt_token_ids"] == fake_tokenize(
            render_prompt(first_messages(), TOOLS)
        )
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_token_in_turns_get_the_rest_of_the_context() -> None:
    """A chat request without ``max_tokens`` gets the rest of the context from a chat
    endpoint; the completions endpoint the token-in path uses defaults to 16 tokens (vLLM),
    so the proxy sends the room left explicitly, and refuses a full context as vLLM does."""
    with (
        OpenAITestServer(
            scripted_responder(REPLIES), max_context=4000, completions_default=16
        ) as upstream,
        ProxyServer(ProxyConfig(upstream=upstream.base_url, token=TOKEN)) as proxy,
    ):
        proxy.open_episode("ep-room")
        play(client(proxy, "ep-room"))
        t = proxy.close_episode("ep-room")
        sent = [r for r in upstream.requests if "prompt" in r]
        assert len(sent) == 2
        for body in sent:
            assert body["max_tokens"] == 4000 - len(body["prompt"])
        assert [turn.mode for turn in t.turns] == ["pass-through", "token-in", "token-in"]
