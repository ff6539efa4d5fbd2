"""A harness asks the model through the proxy with sampling constrained or re-weighted
(``logit_bias``, guided decoding, a JSON schema, allowed or banned tokens, a forced tool
call, no end of sequence...). Success would put tokens the model did not choose into the
transcript as the model's own samples, and training exports would teach the policy them
(a harness that forces the right answer's tokens is rewarded as if the model found it).
The proxy refuses each such field (400 naming it): nothing is forwarded or recorded."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_proxy_malformed_fields import MESSAGES, TOKEN, post

from gymforge.serve.proxy.server import ProxyConfig, ProxyServer
from gymforge.testing.openai_server import OpenAITestServer

CONSTRAINING: list[dict[str, Any]] = [
    {"logit_bias": {"1234": 100}},
    {"guided_regex": "42"},
    {"guided_json": {"type": "object"}},
    {"guided_choice": ["yes", "no"]},
    {"guided_grammar": 'root ::= "42"'},
    {"structured_outputs": {"regex": "42"}},
    {"allowed_token_ids": [1, 2, 3]},
    {"bad_words": ["no"]},
    {"min_tokens": 50},
    {"ignore_eos": True},
    {"presence_penalty": 2.0},
    {"repetition_penalty": 1.5},
    {"response_format": {"type": "json_object"}},
    {"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {}}}},
    {"tool_choice": "required"},
    {"tool_choice": {"type": "function", "function": {"name": "answer"}}},
    {"logits_processors": ["x"]},
]


@pytest.mark.parametrize("fields", CONSTRAINING, ids=[next(iter(f)) for f in CONSTRAINING])
def test_constraining_field_is_refused(fields: dict[str, Any]) -> None:
    with OpenAITestServer() as upstream:
        config = ProxyConfig(upstream=upstream.base_url, token=TOKEN)
        with ProxyServer(config) as proxy:
            url = proxy.open_episode("ep-c") + "/chat/completions"
            status, text = post(url, {"model": "m", "messages": MESSAGES, **fields})
            assert status == 400, (status, text[:300])
            assert repr(next(iter(fields)))[1:-1] in json.loads(text)["error"]["message"]
            assert proxy.transcript("ep-c").turns == []
        assert upstream.requests == []


def test_plain_sampling_still_works() -> None:
    with OpenAITestServer() as upstream:
        config = ProxyConfig(upstream=upstream.base_url, token=TOKEN)
        with ProxyServer(config) as proxy:
            url = proxy.open_episode("ep-ok") + "/chat/completions"
            body = {
                "model": "m",
                "messages": MESSAGES,
                "temperature": 0.7,
                "top_p": 0.9,
                "seed": 3,
                "max_tokens": 16,
                "stop": ["\n"],
                "tool_choice": "auto",
                "response_format": {"type": "text"},
            }
            status, text = post(url, body)
            assert status == 200, text[:300]
            [turn] = proxy.transcript("ep-ok").turns
            assert turn.completion_token_ids
