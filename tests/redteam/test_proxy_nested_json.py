"""Attack: make the harness proxy fail on a request's nesting instead of answering it.

A harness (the agent's process) posts its chat requests to gymforge's proxy, and the model
decides what its own tool calls' arguments say, which the harness sends back in the next
request. A body nested 100,000 deep made the proxy's JSON read raise ``RecursionError``,
and so did arguments text nested as deep when the proxy parsed it to compare turns: either
way the request escaped the proxy's handling as a bare 500, the kind of answer it otherwise
gives only for a failed inference server. Success would mean the agent can end its turn in
a server error of the proxy's making. The defence: a body the proxy cannot read is a 400,
and arguments it cannot parse are compared as the text they are.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from gymforge.serve.proxy.server import ProxyConfig, ProxyServer
from gymforge.testing.openai_server import OpenAITestServer

TOKEN = "proxy-red-token"
DEEP = "[" * 100_000 + "]" * 100_000


@pytest.fixture
def proxy() -> Iterator[ProxyServer]:
    with (
        OpenAITestServer() as upstream,
        ProxyServer(ProxyConfig(upstream=upstream.base_url, token=TOKEN)) as p,
    ):
        yield p


def _post(url: str, data: bytes) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=data, method="POST")
    req.add_header("Authorization", f"Bearer {TOKEN}")
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as err:
        raw = err.read()
        try:
            return err.code, json.loads(raw)
        except ValueError:  # aiohttp's own text for an exception that escaped the handler
            return err.code, {"text": raw[:200].decode(errors="replace")}


def test_a_body_nested_too_deep_is_a_bad_request(proxy: ProxyServer) -> None:
    proxy.open_episode("ep")
    body = b'{"model": "m", "messages": ' + DEEP.encode() + b"}"
    status, answer = _post(proxy.base_url("ep") + "/chat/completions", body)
    assert status == 400 and answer["error"]["code"] == "bad_json", (status, answer)
    assert proxy.upstream_failure("ep") is None


def test_tool_arguments_nested_too_deep_are_compared_as_text(proxy: ProxyServer) -> None:
    proxy.open_episode("ep")
    url = proxy.base_url("ep") + "/chat/completions"
    first = [{"role": "user", "content": "hi"}]
    status, answer = _post(url, json.dumps({"model": "m", "messages": first}).encode())
    assert status == 200, answer
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": DEEP}}
    second = [
        *first,
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    status, answer = _post(url, json.dumps({"model": "m", "messages": second}).encode())
    assert status == 200, answer
    assert proxy.upstream_failure("ep") is None
    assert len(proxy.transcript("ep").turns) == 2
