"""An unauthenticated caller asks the proxy's ``/health`` (the one route without a token)
about its upstream. Success would hand anyone who can reach the port the inference server's
URL with the credentials in it (``https://user:password@host``), and so the model server
itself, past the proxy's recording."""

from __future__ import annotations

import json
import urllib.request

from gymforge.serve.proxy.server import ProxyConfig, ProxyServer

UPSTREAM = "http://trainer:hunter2-upstream-password@127.0.0.1:9/v1?api_key=sk-upstream-key"


def test_health_shows_no_credentials() -> None:
    config = ProxyConfig(upstream=UPSTREAM, token="the-proxy-token", upstream_api_key="sk-abc")
    with ProxyServer(config) as proxy, urllib.request.urlopen(proxy.url + "/health") as r:
        status, text = r.status, r.read().decode()
    assert status == 200 and json.loads(text)["ok"] is True
    for secret in ("hunter2", "trainer", "sk-upstream-key", "sk-abc", "the-proxy-token", "9/v1"):
        assert secret not in text, f"/health shows {secret!r}: {text}"
