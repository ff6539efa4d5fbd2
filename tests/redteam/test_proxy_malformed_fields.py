"""A harness sends chat requests whose fields have the wrong type (``"n": "x"``, a string
temperature, messages as an object...). Success (a 500, or a request forwarded as is)
would let any harness crash the proxy's handler or push unchecked values to the inference
server; each must be a 400 that names the field, with nothing recorded."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from gymforge.serve.proxy.server import ProxyConfig, ProxyServer
from gymforge.testing.openai_server import OpenAITestServer

TOKEN = "proxy-token-for-tests"
MESSAGES = [{"role": "user", "content": "hi"}]
BAD: list[tuple[dict[str, Any], str]] = [
    ({"n": "x"}, "'n'"),
    ({"n": 2.5}, "'n'"),
    ({"n": True}, "'n'"),
    ({"temperature": "hot"}, "'temperature'"),
    ({"top_p": 7}, "'top_p'"),
    ({"max_tokens": "many"}, "'max_tokens'"),
    ({"max_tokens": 0}, "'max_tokens'"),
    ({"stream": "yes"}, "'stream'"),
    ({"tools": "all of them"}, "'tools'"),
    ({"stop": [1, 2]}, "'stop'"),
    ({"seed": "lucky"}, "'seed'"),
    ({"messages": {"role": "user"}}, "'messages'"),
    ({"model": 7}, "'model'"),
]


def post(url: str, body: dict[str, Any]) -> tuple[int, str]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    req.add_header("Authorization", f"Bearer {TOKEN}")
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


@pytest.mark.parametrize(("fields", "named"), BAD, ids=[str(b[0]) for b in BAD])
def test_malformed_field_is_a_400_naming_it(fields: dict[str, Any], named: str) -> None:
    with OpenAITestServer() as upstream:
        config = ProxyConfig(upstream=upstream.base_url, token=TOKEN)
        with ProxyServer(config) as proxy:
            url = proxy.open_episode("ep-bad") + "/chat/completions"
            status, text = post(url, {"model": "m", "messages": MESSAGES, **fields})
            assert status == 400, (status, text)
            assert named in json.loads(text)["error"]["message"]
            assert proxy.transcript("ep-bad").turns == []
        assert upstream.requests == []
