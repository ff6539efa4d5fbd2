"""The lean request path (the default for ``openai:``) does what the SDK's path does: the
same request bytes, the same recorded trajectories, every failure raised as the same error
(class, message, body, code, ``Retry-After``) and so the same retries and exit codes; and
``"auto"`` falls back to the SDK's path, saying why, where the lean client would differ."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import openai
import pytest
from openai._utils._json import openapi_dumps
from openai_helpers import arun
from test_openai_policy import RESET, ctx

from gymforge.core.errors import UserError
from gymforge.core.seeding import canonical_json
from gymforge.registry.handle import open_env
from gymforge.rollout import run
from gymforge.rollout.executors import LocalExecutor
from gymforge.rollout.failures import exit_code, kind_of
from gymforge.rollout.openai_policy import OpenAIPolicyFactory, Retry
from gymforge.rollout.server import (
    Sampling,
    _retry_after,
    encode_body,
    first_choice,
    post_json,
    post_json_lean,
)
from gymforge.rollout.spec import RunSpec
from gymforge.testing import OpenAITestServer, ServedError

PATHS = ("fast", "lean")
RUN_SPECIFIC = ("run_id", "episode_id", "timestamp", "timing", "digest")
"""The fields two runs of the same jobs differ in (``trajectory.schema``)."""


def test_the_request_bytes_are_the_sdks() -> None:
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": 'ü "q" \\ \u2028 \U0001f600'}],
        "seed": 2**40,
        "temperature": 0.7,
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
        "logprobs": True,
    }
    assert encode_body(body) == openapi_dumps(body)
    with pytest.raises(ValueError):
        encode_body({"temperature": float("nan")})  # refused, as the SDK refuses it


def _record_run(path: str, server: OpenAITestServer, out: Path) -> list[str]:
    handle = open_env("math", None)
    assert handle.tasks is not None
    jobs = [(task_id, 3) for task_id in handle.tasks.sample(12, 5, "train")]
    factory = OpenAIPolicyFactory("m", base_url=server.base_url, request_path=path)  # type: ignore[arg-type]
    spec = RunSpec(env="math", policy="openai:m", jobs=jobs, out=out, concurrency=1)

    async def go() -> None:
        try:
            result = await run(spec, LocalExecutor(handle.factory, factory))
            assert result.summary["episodes"] == len(jobs) and not result.errors
        finally:
            await factory.aclose()

    arun(go(), timeout=120)
    assert factory.path() == path
    lines = []
    for line in (out / "trajectories.jsonl").read_text(encoding="utf-8").splitlines():
        record = {k: v for k, v in json.loads(line).items() if k not in RUN_SPECIFIC}
        lines.append(canonical_json(record))
    return lines


def test_both_paths_send_the_same_requests_and_record_the_same_trajectories(
    tmp_path: Path,
) -> None:
    def answer(req: dict[str, Any]) -> str:  # a reply that varies with the prompt
        return f"Thinking. \\boxed{{{len(req['messages'][-1]['content']) % 7}}}"

    recorded, requests = {}, {}
    with OpenAITestServer(answer) as server:
        for path in PATHS:
            server.requests.clear()
            recorded[path] = _record_run(path, server, tmp_path / path)
            requests[path] = sorted(canonical_json(r) for r in server.requests)
    assert requests["fast"] == requests["lean"] and len(requests["lean"]) == 12
    assert recorded["fast"] == recorded["lean"] and len(recorded["lean"]) == 36


def _refuse(req: dict[str, Any]) -> str:
    raise ServedError(404, "The model `nope` does not exist.")


FAULTS = ["429", "429-retry-after", "500", "503", "context-openai", "not-json", "no-choices"]


@pytest.mark.parametrize("fault", [*FAULTS, "404"])
def test_an_error_response_is_the_same_error_on_both_paths(fault: str) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    seen: dict[str, BaseException] = {}
    with OpenAITestServer() as server:
        if fault == "404":
            server.responder = _refuse
        factory = OpenAIPolicyFactory("m", base_url=server.base_url, request_path="fast")

        async def both() -> None:
            http, url = factory.lean()
            for path in PATHS:
                if fault != "404":
                    server.inject(fault)
                try:
                    if path == "fast":
                        data = await post_json(factory.client(), "/chat/completions", body, 10)
                    else:
                        data = await post_json_lean(http, url, "/chat/completions", body, 10)
                    first_choice(data)
                except Exception as err:
                    seen[path] = err
            await factory.aclose()

        arun(both())
    sdk, lean = seen["fast"], seen["lean"]
    assert type(sdk) is type(lean) and str(sdk) == str(lean)
    if isinstance(sdk, openai.APIStatusError):
        assert isinstance(lean, openai.APIStatusError)
        assert (sdk.status_code, sdk.body, sdk.code, sdk.type, sdk.message) == (
            lean.status_code,
            lean.body,
            lean.code,
            lean.type,
            lean.message,
        )
        assert _retry_after(sdk) == _retry_after(lean)
        assert (_retry_after(lean) == 1.0) is (fault == "429-retry-after")


def _outcome(path: str, server: OpenAITestServer, attempts: int) -> tuple[Any, ...]:
    retry = Retry(max_attempts=attempts, base_delay=0.01, max_delay=0.02, call_timeout=10.0)
    factory = OpenAIPolicyFactory("m", base_url=server.base_url, request_path=path, retry=retry)  # type: ignore[arg-type]

    async def go() -> BaseException | None:
        policy = factory()
        try:
            await policy.start(ctx())
            await policy.act(RESET)
            return None
        except Exception as err:
            return err
        finally:
            await factory.aclose()

    err = arun(go())
    if err is None:
        return ("ok", dict(server.served))
    kind = kind_of(err)
    return (type(err), kind, exit_code(kind), getattr(err, "status", None), dict(server.served))


@pytest.mark.parametrize("fault", [*FAULTS, "reset", "drop", "404"])
def test_a_failing_server_ends_an_episode_the_same_way_on_both_paths(fault: str) -> None:
    outcomes = {}
    for path in PATHS:
        with OpenAITestServer() as server:
            if fault == "404":
                server.responder = _refuse
            else:
                server.inject(fault, fault)
            outcomes[path] = _outcome(path, server, attempts=2)
    assert outcomes["fast"] == outcomes["lean"]


def _no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxy from the environment, whatever the machine's."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


def test_auto_is_lean_unless_a_proxy_applies(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_proxies(monkeypatch)

    def decide() -> tuple[str, str | None]:
        factory = OpenAIPolicyFactory("m", base_url="http://127.0.0.1:9/v1")

        async def go() -> str:
            try:
                return factory.path()
            finally:
                await factory.aclose()

        return asyncio.run(go()), factory.sdk_reason

    assert decide() == ("lean", None)
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    path, reason = decide()
    assert path == "fast" and reason is not None and "proxy" in reason
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    assert decide() == ("lean", None)


def test_the_lean_clients_host_header_never_holds_userinfo() -> None:
    from gymforge.rollout.json_http import JsonHttp

    head = JsonHttp("http://user:secret@127.0.0.1:9", {})._head
    assert "Host: 127.0.0.1:9\r\n" in head and "secret" not in head


def test_a_bad_request_path_is_refused() -> None:
    from gymforge.core.errors import UserError

    with pytest.raises(UserError, match="request_path"):
        OpenAIPolicyFactory("m", request_path="quick")  # type: ignore[arg-type]


@pytest.mark.parametrize("named", ["base_url", "OPENAI_BASE_URL"])
@pytest.mark.parametrize("kind", ["openai", "vllm"])
def test_every_request_goes_through_the_proxy_the_environment_names(
    monkeypatch: pytest.MonkeyPatch, kind: str, named: str
) -> None:
    """The policy's server is reachable only through the proxy ``$HTTP_PROXY`` names (the
    test server, which answers a proxied request as its own): every request of a turn
    reaches it, ``vllm:``'s ``/tokenize`` too, which the lean client would send past the
    proxy to a closed port. Each is meant for the policy's server (its ``Host``), whether
    the factory's ``base_url`` names it or, without one, ``$OPENAI_BASE_URL`` as the SDK
    reads it: a ``/tokenize`` sent to the default local server instead would tokenise with
    whatever model listens there."""
    from gymforge.rollout.vllm_policy import VLLMPolicyFactory

    _no_proxies(monkeypatch)
    closed = "http://127.0.0.1:9/v1"  # the discard port: nothing listens on it here
    with OpenAITestServer() as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
        if named == "OPENAI_BASE_URL":
            monkeypatch.setenv("OPENAI_BASE_URL", closed)
        cls = OpenAIPolicyFactory if kind == "openai" else VLLMPolicyFactory
        factory = cls(
            "m",
            base_url=closed if named == "base_url" else None,
            retry=Retry(max_attempts=1),
            sampling=Sampling(max_tokens=8),
        )

        async def go() -> Any:
            policy = factory()
            try:
                await policy.start(ctx())
                return await policy.act(RESET)
            finally:
                await factory.aclose()

        turn = arun(go())
        served, hosts = dict(proxy.served), dict(proxy.hosts)
    assert turn.action is not None and factory.path() == "fast"
    assert served.get("ok") == 1, served  # the turn's completion, answered through the proxy
    assert {host for _, host in hosts} == {"127.0.0.1:9"}, hosts
    if kind == "vllm":
        assert hosts.get(("/tokenize", "127.0.0.1:9"), 0) >= 1, hosts


def test_a_server_without_tokenize_behind_a_proxy_is_no_vllm_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Through the proxy, a server without ``/tokenize`` (a 404) is refused for token-in as
    it is without one: ``TokenInUnsupported``, naming the alternatives, not retried."""
    from gymforge.rollout.tokenize_endpoint import TokenInUnsupported
    from gymforge.rollout.vllm_policy import VLLMPolicyFactory

    _no_proxies(monkeypatch)
    with OpenAITestServer(token_in=False) as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
        factory = VLLMPolicyFactory(
            "m", base_url="http://127.0.0.1:9/v1", sampling=Sampling(max_tokens=8)
        )

        async def go() -> None:
            policy = factory()
            try:
                await policy.start(ctx())
                await policy.act(RESET)
            finally:
                await factory.aclose()

        with pytest.raises(TokenInUnsupported, match="--tokenizer"):
            arun(go())
        assert proxy.served.get("ok", 0) == 0


def test_the_lean_clients_keep_to_the_factorys_connection_cap() -> None:
    """The lean clients (the completions', and ``vllm:``'s ``/tokenize``) bound their open
    connections by the factory's ``max_connections``, as the SDK's client does on its path
    (``tests/rollout/test_json_http.py`` holds a cap to its word)."""
    from gymforge.rollout.vllm_policy import VLLMPolicyFactory

    chat = OpenAIPolicyFactory("m", base_url="http://127.0.0.1:9/v1", max_connections=3)
    token_in = VLLMPolicyFactory("m", base_url="http://127.0.0.1:9/v1", max_connections=5)

    async def caps() -> tuple[int | None, int | None, int | None]:
        try:
            template = token_in.template.renderer
            return (
                chat.lean()[0].max_connections,
                token_in.lean()[0].max_connections,
                template._client()[0].max_connections,  # type: ignore[attr-defined]
            )
        finally:
            await chat.aclose()
            await token_in.aclose()

    assert asyncio.run(caps()) == (3, 5, 5)


@pytest.mark.parametrize(
    ("url", "reason", "shown", "secret"),
    [
        ("http://user:s3cret@127.0.0.1:9/v1", "credentials", "http://***@127.0.0.1:9/v1", "s3cret"),
        (
            "http://127.0.0.1:9/v1?api-version=2024-06-01&api_key=sk-in-the-query",
            "has a query",
            "http://127.0.0.1:9/v1?...",
            "sk-in-the-query",
        ),
        ("http:user:s3cret@127.0.0.1:9/v1", "names no HTTP server", "base URL names", "s3cret"),
        ("localhost:8000/v1", "names no HTTP server", "URL localhost:8000/v1 names", "\x00"),
    ],
)
@pytest.mark.parametrize("named", ["base_url", "OPENAI_BASE_URL"])
@pytest.mark.parametrize("kind", ["openai", "vllm"])
def test_a_base_url_no_request_can_use_is_refused_before_any_request(
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    named: str,
    url: str,
    reason: str,
    shown: str,
    secret: str,
) -> None:
    """Base URLs no request can be sent to as given are refused when the factory is made,
    not once per episode, with an error that names the URL without its secret:

    - ``user:password@``: the SDK's aiohttp transport refuses every request that carries
      them beside its bearer key, and its httpx transport would send them instead of it;
    - a query: the SDK joins a request's path after it (``/v1/?api-version=1`` and
      ``chat/completions`` give the query ``api-version=1chat/completions``), and
      ``vllm:``'s ``/tokenize`` beside it would be as broken (the query may carry a key);
    - no HTTP(S) host (a missing ``//``): every request failed after its retries, the
      password in each error, and the lean client's went to port 80 of this machine."""
    from gymforge.rollout.vllm_policy import VLLMPolicyFactory

    _no_proxies(monkeypatch)
    if named == "OPENAI_BASE_URL":
        monkeypatch.setenv("OPENAI_BASE_URL", url)
    cls = VLLMPolicyFactory if kind == "vllm" else OpenAIPolicyFactory
    with pytest.raises(UserError, match=reason) as info:
        cls("m", base_url=url if named == "base_url" else None)
    assert secret not in str(info.value) and shown in str(info.value)


def test_a_bare_question_mark_is_refused_and_a_fragment_taken() -> None:
    """An empty query breaks the SDK's URLs as well (``/v1/?chat/completions``); a fragment
    never reaches the server (the SDK and the lean client drop it), even one holding a
    ``?``."""
    with pytest.raises(UserError, match="has a query"):
        OpenAIPolicyFactory("m", base_url="http://127.0.0.1:9/v1?")
    OpenAIPolicyFactory("m", base_url="http://127.0.0.1:9/v1#part?x=1")
