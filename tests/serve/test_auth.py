"""Bearer-token auth: /health open, everything else 401/403 over HTTP and close 1008 over
WebSocket; no binding beyond loopback without a token."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from serve_helpers import TOKEN, Raw
from typer.testing import CliRunner
from websockets.exceptions import ConnectionClosed

from gymforge.cli import app
from gymforge.core.errors import UserError
from gymforge.registry.resolve import make_env
from gymforge.serve.client import RemoteEnvFactory, remote_factory
from gymforge.serve.config import ServeConfig, check_binding, is_loopback
from gymforge.serve.http import AuthError
from gymforge.serve.launch import ServerThread

PROTECTED = [
    ("GET", "/metadata", None),
    ("GET", "/schema", None),
    ("GET", "/metrics", None),
    ("POST", "/tasks/sample", {"n": 1, "seed": 0}),
    ("POST", "/tasks/resolve", {"task_id": "ledger.transfer/v1/d1/s1"}),
    ("POST", "/oracle/plan", {"task_id": "ledger.transfer/v1/d1/s1"}),
]


def test_health_needs_no_token(ledger_server: ServerThread) -> None:
    reply = httpx.get(f"{ledger_server.http_url}/health")
    assert reply.status_code == 200
    assert reply.json() == {"status": "ok", "protocol": 1}


@pytest.mark.parametrize(("method", "path", "body"), PROTECTED)
def test_http_routes_refuse_missing_and_wrong_tokens(
    ledger_server: ServerThread, method: str, path: str, body: dict[str, object] | None
) -> None:
    url = f"{ledger_server.http_url}{path}"
    missing = httpx.request(method, url, json=body)
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"] == "Bearer"
    assert missing.json()["error"]["code"] == "unauthorized"
    wrong = httpx.request(method, url, json=body, headers={"Authorization": "Bearer x" * 3})
    assert wrong.status_code == 403
    basic = httpx.request(method, url, json=body, headers={"Authorization": f"Basic {TOKEN}"})
    assert basic.status_code == 401
    good = httpx.request(method, url, json=body, headers={"Authorization": f"Bearer {TOKEN}"})
    assert good.status_code == 200, good.text


@pytest.mark.parametrize(("token", "reason"), [(None, "missing"), ("wrong-token", "wrong")])
def test_websocket_refuses_with_policy_violation(
    ledger_server: ServerThread, token: str | None, reason: str
) -> None:
    with Raw(ledger_server, token=token) as raw:
        assert raw.hello["type"] == "error"
        assert raw.hello["code"] == "unauthorized" and raw.hello["fatal"] is True
        assert reason in raw.hello["message"]
        with pytest.raises(ConnectionClosed) as closed:
            raw.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008


def test_websocket_accepts_the_token(ledger_server: ServerThread) -> None:
    with Raw(ledger_server) as raw:
        assert raw.hello["type"] == "hello"
        assert raw.hello["env"]["id"] == "ledger"
        assert raw.ask({"type": "ping", "id": 7}) == {"type": "pong", "id": 7}


def test_cross_origin_websocket_is_refused(ledger_server: ServerThread) -> None:
    with Raw(ledger_server, headers={"Origin": "https://evil.example"}) as raw:
        assert raw.hello["code"] == "unauthorized" and "Origin" in raw.hello["message"]
        with pytest.raises(ConnectionClosed) as closed:
            raw.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008


def test_client_raises_auth_errors(ledger_server: ServerThread) -> None:
    with pytest.raises(AuthError, match="401 missing bearer token"):
        remote_factory(ledger_server.url, token=None).metadata()
    with pytest.raises(AuthError, match="403 wrong bearer token"):
        remote_factory(ledger_server.url, token="not-the-token").metadata()
    factory = RemoteEnvFactory(ledger_server.url, TOKEN)
    env = factory()  # metadata read with the right token; the session uses a wrong one
    factory.service.token = "not-the-token"

    async def reset() -> None:
        try:
            await env.reset("ledger.transfer/v1/d1/s1", 0)
        finally:
            await env.close()

    with pytest.raises(AuthError, match="wrong bearer token"):
        asyncio.run(reset())


def test_token_comes_from_the_environment(
    ledger_server: ServerThread, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GYMFORGE_TOKEN", TOKEN)
    env = make_env(ledger_server.url)
    assert env.spec.id == "ledger"


def test_no_binding_beyond_loopback_without_a_token() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.1.2.3")
    assert not is_loopback("example.com")
    for host in ("0.0.0.0", "::", "192.168.1.10"):
        with pytest.raises(UserError, match="bearer token is required"):
            check_binding(host, None)
        check_binding(host, TOKEN)  # with a token it may
    with pytest.raises(UserError, match="bearer token is required"):
        ServerThread("ledger", ServeConfig(), host="0.0.0.0")
    result = CliRunner().invoke(app, ["serve", "ledger", "--host", "0.0.0.0", "--port", "0"])
    assert result.exit_code == 2
    assert "refusing to bind 0.0.0.0" in result.output
    with pytest.raises(UserError, match="at least 8"):
        ServeConfig(token="short")
