"""Red team 9: attacks on a turn asked again after a failure (turn_budget), /tokenize on the
SDK's path, the lean client's connection cap, and tools JSON cannot carry."""

from __future__ import annotations

import asyncio
import copy
import math
import threading
from typing import Any

import pytest
from openai_helpers import FAST_RETRY, arun

from gymforge.core.episode import Budget
from gymforge.core.policy import episode_context
from gymforge.core.types import Message, Observation
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout import openai_policy as openai_mod
from gymforge.rollout import vllm_policy as vllm_mod
from gymforge.rollout.json_http import JsonHttp
from gymforge.rollout.openai_policy import OpenAIPolicyFactory
from gymforge.rollout.parsing import ToolsNotJson
from gymforge.rollout.server import (
    PolicyRequestRejected,
    PolicyServerError,
    Retry,
    Sampling,
    ServerFactory,
)
from gymforge.rollout.tokenize_endpoint import TokenInUnsupported
from gymforge.rollout.vllm_policy import VLLMPolicyFactory
from gymforge.testing import OpenAITestServer, ServedError
from gymforge.testing.openai_server import ServedReply, ServedToolCall, scripted_responder, token_in
from gymforge.testing.openai_server.fake import VLLM_COMPLETIONS_DEFAULT_MAX_TOKENS

KINDS = ("openai", "vllm")
TOOL = {"type": "function", "function": {"name": "f", "description": "d", "parameters": {}}}
TOOL2 = {"type": "function", "function": {"name": "g", "description": "e", "parameters": {}}}
CALL = ServedReply(tool_calls=(ServedToolCall("f", {"x": 1}),))
RESET = Observation(
    messages=(Message(role="system", content="Be brief."), Message(role="user", content="Hi")),
    tools=(TOOL,),
    tokens=9,
)
RESULT = Observation(
    messages=(Message(role="tool", content='{"ok": true}', tool_call_id="call_1"),), tokens=7
)


class BudgetedLedger(LedgerEnv):
    budget = Budget(max_steps=24, max_tokens=6000)


def server(**kw: Any) -> OpenAITestServer:
    return OpenAITestServer(
        scripted_responder([CALL, "done", "done", "done"]),
        completions_default=VLLM_COMPLETIONS_DEFAULT_MAX_TOKENS,
        **kw,
    )


def make(kind: str, base_url: str, **kw: Any) -> ServerFactory:
    cls = OpenAIPolicyFactory if kind == "openai" else VLLMPolicyFactory
    kw.setdefault("retry", FAST_RETRY)
    return cls("m", base_url=base_url, **kw)


def model_requests(srv: OpenAITestServer) -> list[dict[str, Any]]:
    return [r for r in srv.requests if "prompt" in r or "messages" in r]


def state(policy: Any) -> Any:
    if isinstance(policy, openai_mod.OpenAIPolicy):
        return (copy.deepcopy(policy.messages), copy.deepcopy(policy.tools), policy.turns,
                policy.budget.used)  # fmt: skip
    return (list(policy.ids or []), policy._ids_json, policy.tools.key, policy.turns,
            policy.budget.used, list(policy._last_completion), policy._last_call)  # fmt: skip


def turns(kind: str, observations: list[Observation], fail_at: int | None, how: str,
          monkeypatch: pytest.MonkeyPatch | None = None, changed: list[Any] | None = None,
          **kw: Any) -> dict[str, Any]:  # fmt: skip
    """The last model request after playing ``observations``; the turn ``fail_at`` fails
    first (``how``), is checked to leave the policy as it was, and is asked again."""
    with server(**kw.pop("srv", {})) as srv:
        made = make(kind, srv.base_url, **kw)

        async def go() -> None:
            policy = made()
            await policy.start(episode_context(policy, BudgetedLedger(), "t/v1/d1/s1", 0))
            try:
                for i, obs in enumerate(observations):
                    if i == fail_at:
                        before = state(policy)
                        await fail(policy, obs, srv, how, monkeypatch)
                        if state(policy) != before:
                            assert changed is not None, (state(policy), before)
                            changed.append((before, state(policy)))
                    await policy.act(obs)
            finally:
                await made.aclose()

        arun(go())
        return model_requests(srv)[-1]


async def fail(policy: Any, obs: Observation, srv: OpenAITestServer, how: str,
               monkeypatch: pytest.MonkeyPatch | None) -> None:  # fmt: skip
    if how == "500s":
        # after the agent acted, the episode's first prompt is asked for one token too
        # (rollout.transcript_refusal): failed as well, the turn's failure is raised
        srv.inject(*["500"] * FAST_RETRY.max_attempts * 2)
        with pytest.raises(PolicyServerError):
            await policy.act(obs)
        srv.faults.clear()  # a first turn's failure asks nothing more
    elif how == "cancel":
        srv.latency = lambda body: 3.0 if ("prompt" in body or "messages" in body) else 0.0
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(policy.act(obs), 0.5)
        srv.latency = 0.0
    elif how == "context-then-500s":  # the room-resend fails on every attempt
        srv.inject("context-too-large", *["500"] * FAST_RETRY.max_attempts * 2)
        with pytest.raises(PolicyServerError):
            await policy.act(obs)
        srv.faults.clear()
    elif how == "after-reply":  # the request succeeded; reading it into a turn failed
        assert monkeypatch is not None
        target = openai_mod if isinstance(policy, openai_mod.OpenAIPolicy) else vllm_mod
        name = "turn_from_reply" if target is openai_mod else "parse_completion"
        real = getattr(target, name)

        def boom(*a: Any, **k: Any) -> Any:
            raise RuntimeError("boom after the reply")

        monkeypatch.setattr(target, name, boom)
        try:
            with pytest.raises(RuntimeError, match="boom"):
                await policy.act(obs)
        finally:
            monkeypatch.setattr(target, name, real)
    elif how == "read_turn":  # vllm: the answer's ids are refused after the request
        assert monkeypatch is not None
        real = vllm_mod.read_turn

        def refuse(*a: Any, **k: Any) -> Any:
            raise TokenInUnsupported("refused ids")

        monkeypatch.setattr(vllm_mod, "read_turn", refuse)
        try:
            with pytest.raises(TokenInUnsupported):
                await policy.act(obs)
        finally:
            monkeypatch.setattr(vllm_mod, "read_turn", real)
    else:
        raise AssertionError(how)


# ---- 1. a turn asked again after a failure ---------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("how", ["500s", "cancel"])
def test_first_turn_with_tools_failed_then_asked_again(kind: str, how: str) -> None:
    changed: list[Any] = []
    again = turns(kind, [RESET, RESULT], 0, how, changed=changed)
    once = turns(kind, [RESET, RESULT], None, how)
    assert again == once  # the request asked again is the never-failed one
    assert changed == []  # and the policy was left exactly as it was


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("how", ["500s", "cancel", "context-then-500s"])
def test_second_turn_failed_then_asked_again(kind: str, how: str) -> None:
    sampling = Sampling(max_tokens=300) if how.startswith("context") else None
    extra = {"sampling": sampling} if sampling else {}
    again = turns(kind, [RESET, RESULT, RESULT], 1, how, **extra)
    once = turns(kind, [RESET, RESULT, RESULT], None, how, **extra)
    assert again == once


def test_openai_new_tools_on_a_failed_turn_are_rolled_back() -> None:
    """Turn 2 brings other tools and fails: the policy keeps turn 1's tools."""
    obs2 = Observation(messages=RESULT.messages, tools=(TOOL2,), tokens=7)
    again = turns("openai", [RESET, obs2, RESULT], 1, "500s")
    once = turns("openai", [RESET, obs2, RESULT], None, "500s")
    assert again == once and again["tools"][0]["function"]["name"] == "g"


def test_vllm_read_turn_refusal_leaves_the_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    again = turns("vllm", [RESET, RESULT, RESULT], 1, "read_turn", monkeypatch)
    once = turns("vllm", [RESET, RESULT, RESULT], None, "500s")
    assert again == once


@pytest.mark.parametrize("kind", KINDS)
def test_a_failure_after_the_reply_leaves_the_policy(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The request succeeded but turning its answer into a turn raised: the turn was not
    taken, so the policy should be as it was (no half-committed transcript or budget)."""
    changed: list[Any] = []
    again = turns(kind, [RESET, RESULT, RESULT], 1, "after-reply", monkeypatch, changed)
    once = turns(kind, [RESET, RESULT, RESULT], None, "500s")
    assert again == once
    assert changed == []


# ---- 2. /tokenize on the SDK's path ------------------------------------------------------
def _clear_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


def _vllm_turn(base_url: str, retry: Retry = FAST_RETRY) -> Any:
    factory = VLLMPolicyFactory("m", base_url=base_url, retry=retry,
                                sampling=Sampling(max_tokens=8))  # fmt: skip

    async def go() -> Any:
        policy = factory()
        try:
            await policy.start(episode_context(policy, LedgerEnv(), "t/v1/d1/s1", 0))
            return await policy.act(RESET), factory.path()
        finally:
            await factory.aclose()

    return arun(go())


def test_no_proxy_covering_the_host_keeps_tokenize_direct(monkeypatch: pytest.MonkeyPatch) -> None:
    _clear_proxies(monkeypatch)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # a closed port: never used
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with server() as srv:
        turn, path = _vllm_turn(srv.base_url)
        assert path == "lean" and turn.action is not None and srv.served["/tokenize"] >= 1


def _flaky_tokenize(monkeypatch: pytest.MonkeyPatch, *statuses: int) -> None:
    queue = list(statuses)
    real = token_in.tokenize

    def tokenize(body: dict[str, Any], max_context: int | None) -> dict[str, Any]:
        if queue:
            status = queue.pop(0)
            raise ServedError(status, f"tokenize says {status}: bad chat template")
        return real(body, max_context)

    monkeypatch.setattr(token_in, "tokenize", tokenize)


@pytest.mark.parametrize("status", [500, 503, 429])
def test_tokenize_through_a_proxy_retries_5xx_and_429(
    monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    _clear_proxies(monkeypatch)
    _flaky_tokenize(monkeypatch, status, status)
    with server() as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
        turn, path = _vllm_turn("http://127.0.0.1:9/v1")
    assert path == "fast" and turn.action is not None


@pytest.mark.parametrize("proxied", [False, True])
def test_a_tokenize_400_names_tokenize_and_the_servers_words(
    monkeypatch: pytest.MonkeyPatch, proxied: bool
) -> None:
    """A 400 from /tokenize is a rejection naming /tokenize and the server's message, on
    either path (the lean path says ``refused /tokenize (400): ...``)."""
    _clear_proxies(monkeypatch)
    _flaky_tokenize(monkeypatch, 400)
    with server() as srv:
        if proxied:
            monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{srv.port}")
        with pytest.raises(PolicyRequestRejected) as err:
            _vllm_turn("http://127.0.0.1:9/v1" if proxied else srv.base_url)
    assert not isinstance(err.value, TokenInUnsupported)
    assert "/tokenize" in str(err.value) and "bad chat template" in str(err.value)


# ---- 3. the lean client's connection cap -----------------------------------------------
async def _serve(hang: set[str], close: bool = False, idle_close: float | None = None) -> Any:
    counts = {"open": 0, "most": 0}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                size = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                await reader.readexactly(size)
                path = head.split(b" ")[1].decode()
                if path in hang:  # until the client gives up and closes
                    await asyncio.wait_for(reader.read(), 30)
                    break
                await asyncio.sleep(0.005)
                extra = b"Connection: close\r\n" if close else b""
                writer.write(b"HTTP/1.1 200 OK\r\n" + extra + b"Content-Length: 2\r\n\r\n{}")
                await writer.drain()
                if close:
                    break
                if idle_close is not None:
                    await asyncio.sleep(idle_close)
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    class Counted(asyncio.StreamReaderProtocol):
        """Counts a connection open from its accept to the client's close as the loop reads
        them, not as the handler's task gets round to them (which order differs by loop)."""

        gone = False

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            counts["open"] += 1
            counts["most"] = max(counts["most"], counts["open"])
            super().connection_made(transport)

        def eof_received(self) -> bool | None:
            self._gone()
            return super().eof_received()

        def connection_lost(self, exc: Exception | None) -> None:
            self._gone()
            super().connection_lost(exc)

        def _gone(self) -> None:
            if not self.gone:
                self.gone = True
                counts["open"] -= 1

    loop = asyncio.get_running_loop()
    srv = await loop.create_server(lambda: Counted(asyncio.StreamReader(), handle), "127.0.0.1", 0)
    return srv, f"http://127.0.0.1:{srv.sockets[0].getsockname()[1]}", counts


def test_a_timed_out_request_frees_its_slot() -> None:
    async def go() -> None:
        srv, root, _ = await _serve({"/hang"})
        http = JsonHttp(root, {}, max_connections=1)
        try:
            for _ in range(3):
                with pytest.raises(TimeoutError):
                    await http.post("/hang", b"{}", 0.2)
                assert await http.post("/ok", b"{}", 5) == (200, b"{}")
        finally:
            await http.aclose()
            srv.close()

    asyncio.run(asyncio.wait_for(go(), 30))


def test_cancelled_holders_and_waiters_free_their_slots() -> None:
    async def go() -> None:
        srv, root, counts = await _serve({"/hang"})
        http = JsonHttp(root, {}, max_connections=1)
        try:
            holder = asyncio.ensure_future(http.post("/hang", b"{}", None))
            await asyncio.sleep(0.05)
            waiters = [asyncio.ensure_future(http.post("/ok", b"{}", None)) for _ in range(3)]
            await asyncio.sleep(0.05)
            waiters[0].cancel()
            holder.cancel()  # the slot goes to a waiter just as another is cancelled
            waiters[1].cancel()
            done = await asyncio.gather(*waiters, return_exceptions=True)
            assert done[2] == (200, b"{}")
            answers = await asyncio.gather(*(http.post("/ok", b"{}", 5) for _ in range(5)))
            assert answers == [(200, b"{}")] * 5 and counts["most"] <= 1
        finally:
            await http.aclose()
            srv.close()

    asyncio.run(asyncio.wait_for(go(), 30))


def test_connection_close_answers_stay_within_the_cap() -> None:
    """Every answer closes its connection: the next request opens a new one only once the
    old one is closed, so the server never sees more than the cap open."""

    async def go() -> dict[str, int]:
        srv, root, counts = await _serve(set(), close=True)
        http = JsonHttp(root, {}, max_connections=2)
        try:
            answers = await asyncio.gather(*(http.post("/ok", b"{}", 10) for _ in range(40)))
            assert answers == [(200, b"{}")] * 40
        finally:
            await http.aclose()
            srv.close()
        return counts

    counts = asyncio.run(asyncio.wait_for(go(), 60))
    assert counts["most"] <= 2, counts


def test_an_idle_connection_closed_by_the_server_is_replaced() -> None:
    """The server closes a kept-alive connection while it is idle: the next request opens
    a new one (cap 1: the closed one's slot is free)."""

    async def go() -> None:
        srv, root, _counts = await _serve(set(), idle_close=0.05)
        http = JsonHttp(root, {}, max_connections=1)
        try:
            for _ in range(3):
                assert await http.post("/ok", b"{}", 5) == (200, b"{}")
                await asyncio.sleep(0.2)
        finally:
            await http.aclose()
            srv.close()

    asyncio.run(asyncio.wait_for(go(), 30))


def test_aclose_with_requests_in_flight_keeps_the_cap() -> None:
    """aclose while requests hold every slot, then more requests: at most cap open."""

    async def go() -> dict[str, int]:
        srv, root, counts = await _serve(set())
        http = JsonHttp(root, {}, max_connections=2)
        try:
            first = [asyncio.ensure_future(http.post("/ok", b"{}", 10)) for _ in range(2)]
            await asyncio.sleep(0.001)
            await http.aclose()
            more = [http.post("/ok", b"{}", 10) for _ in range(6)]
            await asyncio.gather(*first, *more)
            await asyncio.sleep(0.05)
            return dict(counts, idle=len(http._loop_pool().idle))
        finally:
            await http.aclose()
            srv.close()

    counts = asyncio.run(asyncio.wait_for(go(), 30))
    assert counts["most"] <= 2 and counts["idle"] <= 2, counts


def test_two_event_loops_in_two_threads_share_one_client() -> None:
    """One client, two loops at once (each its own cap): no request fails."""
    errors: list[BaseException] = []
    ready = threading.Event()
    roots: list[str] = []
    stop = threading.Event()

    def serve() -> None:
        async def main() -> None:
            srv, root, _ = await _serve(set())
            roots.append(root)
            ready.set()
            while not stop.is_set():
                await asyncio.sleep(0.05)
            srv.close()

        asyncio.run(main())

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    ready.wait(10)
    http = JsonHttp(roots[0], {}, max_connections=1)

    def client() -> None:
        async def main() -> None:
            try:
                for _ in range(40):
                    await asyncio.gather(*(http.post("/ok", b"{}", 5) for _ in range(3)))
            finally:
                await http.aclose()

        try:
            asyncio.run(main())
        except BaseException as err:
            errors.append(err)

    import sys

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=client) for _ in range(2)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(60)
    finally:
        sys.setswitchinterval(interval)
        stop.set()
        t.join(10)
    assert not errors, errors


# ---- 4. tools JSON cannot carry ------------------------------------------------------
def deep_nan() -> dict[str, Any]:
    items = {"anyOf": [{"type": "integer"}, {"type": "number", "maximum": math.inf}]}
    parameters = {"type": "object", "properties": {"x": {"type": "array", "items": items}}}
    return {"type": "function", "function": {"name": "f", "parameters": parameters}}


async def _act(factory: ServerFactory, *observations: Observation) -> Any:
    policy = factory()
    await policy.start(episode_context(policy, LedgerEnv(), "t/v1/d1/s1", 0))
    try:
        for obs in observations:
            turn = await policy.act(obs)
        return turn
    finally:
        await factory.aclose()


@pytest.mark.parametrize(
    ("kind", "path"),
    [("openai", "lean"), ("openai", "fast"), ("openai", "typed"), ("vllm", "auto")],
)
def test_a_deep_infinity_in_tools_on_every_path(kind: str, path: str) -> None:
    obs = Observation(messages=RESET.messages, tools=(deep_nan(),))
    with server() as srv:
        factory = make(kind, srv.base_url, request_path=path, sampling=Sampling(max_tokens=8))
        with pytest.raises(ToolsNotJson, match=r"anyOf\[1\]\.maximum: inf"):
            arun(_act(factory, obs))
        assert model_requests(srv) == []


def test_openai_not_json_tools_on_a_later_turn_keep_the_earlier_tools() -> None:
    bad = Observation(messages=RESULT.messages, tools=(deep_nan(),))
    with server() as srv:
        factory = make("openai", srv.base_url)

        async def go() -> None:
            policy = factory()
            await policy.start(episode_context(policy, LedgerEnv(), "t/v1/d1/s1", 0))
            try:
                await policy.act(RESET)
                before = state(policy)
                with pytest.raises(ToolsNotJson):
                    await policy.act(bad)
                assert state(policy) == before
            finally:
                await factory.aclose()

        arun(go())


@pytest.mark.parametrize("kind", KINDS)
def test_tools_json_can_carry_are_sent(kind: str) -> None:
    """A 70-bit integer, a tuple, a list subclass, unicode: JSON carries them all."""

    class Tools(list):  # type: ignore[type-arg]
        pass

    schema = {"type": "integer", "maximum": 2**70, "enum": (1, 2), "x": Tools(["é", None])}
    obs = Observation(messages=RESET.messages, tools=({"type": "function", "function": {
        "name": "f", "parameters": schema}},))  # fmt: skip
    with server() as srv:
        factory = make(kind, srv.base_url, sampling=Sampling(max_tokens=8))
        turn = arun(_act(factory, obs))
        assert turn.action is not None and len(model_requests(srv)) == 1


def test_a_value_error_from_elsewhere_is_not_blamed_on_good_tools(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with server() as srv:
        factory = make("openai", srv.base_url)

        async def broken(self: Any, body: dict[str, Any]) -> Any:
            raise ValueError("something else")

        monkeypatch.setattr(openai_mod.OpenAIPolicy, "_send", broken)
        with pytest.raises(ValueError, match="something else") as err:
            arun(_act(factory, RESET))
        assert not isinstance(err.value, ToolsNotJson)


def test_a_vllm_factorys_lean_clients_together_keep_to_its_cap() -> None:
    """``max_connections`` is the factory's cap (the SDK's one pool holds completions and
    /tokenize alike): on the lean path the completions' and /tokenize's clients together
    should open no more than it to the one server."""
    with server() as srv:
        counts = {"open": 0, "most": 0}

        async def go() -> None:
            async def pipe(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
                try:
                    while data := await r.read(65536):
                        w.write(data)
                        await w.drain()
                except (ConnectionError, asyncio.CancelledError):
                    pass
                finally:
                    w.close()

            async def forward(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
                counts["open"] += 1
                counts["most"] = max(counts["most"], counts["open"])
                ur, uw = await asyncio.open_connection("127.0.0.1", srv.port)
                try:
                    await asyncio.gather(pipe(r, uw), pipe(ur, w))
                finally:
                    counts["open"] -= 1

            fwd = await asyncio.start_server(forward, "127.0.0.1", 0)
            port = fwd.sockets[0].getsockname()[1]
            factory = VLLMPolicyFactory("m", base_url=f"http://127.0.0.1:{port}/v1",
                                        retry=FAST_RETRY, sampling=Sampling(max_tokens=8),
                                        max_connections=2, request_path="lean")  # fmt: skip
            srv.latency = 0.02

            async def episode(i: int) -> None:
                policy = factory()
                await policy.start(episode_context(policy, LedgerEnv(), "t/v1/d1/s1", i))
                await policy.act(RESET)

            try:
                await asyncio.gather(*(episode(i) for i in range(8)))
            finally:
                await factory.aclose()
                fwd.close()

        arun(go(), 60)
    assert counts["most"] <= 2, counts
