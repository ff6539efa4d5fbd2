"""Attack: read the upstream's address from the proxy's relay of a refusal.

A harness (the agent's own process) may only reach the inference server through gymforge's
proxy, which never tells it the upstream's URL (it may carry credentials, and it is where
a harness that escaped its network would go). When the upstream refuses a ``/tokenize``
rendering of the harness's new messages, the proxy relays the refusal as the upstream's 4xx
(``test_harness_upstream_refuses_agent_text.py``). Success of the attack would be that
relay naming the upstream's URL: the refusal's text as the policy client words it starts
with the server's root.
"""

from __future__ import annotations

import json

from gymforge.rollout.tokenize_endpoint import _refused
from gymforge.serve.proxy.forward import upstream_refusal

UPSTREAM = "http://user:s3cret@10.9.8.7:8123"
GUARDRAIL = "Request blocked by guardrail: prohibited content"


def test_a_relayed_refusal_names_no_upstream() -> None:
    raw = json.dumps({"error": {"message": GUARDRAIL, "code": None}}).encode()
    response = upstream_refusal(_refused(UPSTREAM, "/tokenize", 400, raw))
    assert response is not None and response.status == 400
    body = response.body
    assert isinstance(body, bytes)
    text = body.decode()
    assert GUARDRAIL in text  # the upstream's own words reach the harness
    assert "10.9.8.7" not in text and "s3cret" not in text and "8123" not in text
