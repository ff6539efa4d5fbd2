"""Attack: send the policy's requests past the proxy the environment names, through a
``$NO_PROXY`` entry the two clients read differently.

Under ``request_path="auto"`` a policy posts through gymforge's lean client, which speaks to
the server directly, unless ``sdk_only_reason`` finds that a proxy from the environment
applies, and then through the SDK, whose transports honour ``$HTTP_PROXY`` and
``$NO_PROXY``. It decided with ``urllib``'s reading of ``$NO_PROXY``, where ``.localhost``
(a leading dot) also matches ``localhost`` itself; the SDK's transports read it as
subdomains only, so they send ``http://localhost:PORT/v1`` through the proxy. With both
set, every request went straight to the server instead of through the proxy the
operator's environment requires (an egress gateway, an auditing proxy; where direct
egress is closed, every episode fails after its retries). Success would be a request that
the SDK would proxy reaching the server directly; the defence also asks the SDK's own
client whether a proxy applies to the URL, and takes its path if either says so.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from gymforge.rollout.openai_policy import OpenAIPolicyFactory, Retry
from gymforge.testing import OpenAITestServer

CLOSED = "http://localhost:9/v1"  # the discard port: nothing listens on it here


def _only(monkeypatch: pytest.MonkeyPatch, **env: str) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)


@pytest.mark.parametrize("transport", ["httpx", "aiohttp"])
def test_a_request_the_sdk_would_proxy_goes_through_the_proxy(
    monkeypatch: pytest.MonkeyPatch, transport: Any
) -> None:
    with OpenAITestServer() as proxy:
        _only(monkeypatch, HTTP_PROXY=f"http://127.0.0.1:{proxy.port}", NO_PROXY=".localhost")
        factory = OpenAIPolicyFactory(
            "m", base_url=CLOSED, retry=Retry(max_attempts=1), transport=transport
        )
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 8}

        async def go() -> Any:
            try:
                return await factory.post("/chat/completions", body, json.loads)
            finally:
                await factory.aclose()

        answer = asyncio.run(go())
        served = dict(proxy.served)
    assert factory.path() == "fast" and "proxy" in (factory.sdk_reason or "")
    assert served.get("ok") == 1, served
    assert answer["choices"], answer


@pytest.mark.parametrize(
    ("host", "no_proxy"),
    [
        ("localhost", ".localhost"),
        ("example.com", ".example.com"),
        ("EXAMPLE.com", ".example.com"),
        ("example.com:8000", ".example.com"),
    ],
)
def test_auto_takes_the_sdks_path_where_its_transport_proxies(
    monkeypatch: pytest.MonkeyPatch, host: str, no_proxy: str
) -> None:
    _only(monkeypatch, HTTP_PROXY="http://proxy.invalid:3128", NO_PROXY=no_proxy)
    factory = OpenAIPolicyFactory("m", base_url=f"http://{host}/v1")

    async def go() -> str:
        try:
            return factory.path()
        finally:
            await factory.aclose()

    assert asyncio.run(go()) == "fast", factory.sdk_reason


def test_a_host_both_readings_exempt_stays_on_the_lean_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _only(monkeypatch, HTTP_PROXY="http://proxy.invalid:3128", NO_PROXY="localhost,.example.com")
    for host in ("localhost:9", "api.example.com"):
        factory = OpenAIPolicyFactory("m", base_url=f"http://{host}/v1")

        async def go(f: OpenAIPolicyFactory = factory) -> str:
            try:
                return f.path()
            finally:
                await f.aclose()

        assert asyncio.run(go()) == "lean", (host, factory.sdk_reason)
