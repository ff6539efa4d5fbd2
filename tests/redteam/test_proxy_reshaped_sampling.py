"""Attack: a harness re-shapes the model's distribution through the proxy's allowed fields.

``logit_bias``, guided decoding and the like are refused, but ``temperature``, ``top_k``,
``top_p`` and ``min_p`` are forwarded as they come, and the turn is recorded with
``capture_level: tokens`` and the sampled tokens' logprobs, without the settings that drew
them. A harness that asks for ``top_k: 1`` (greedy) or ``temperature: 0.05`` on the turns
that matter gets tokens the run's sampling would not have drawn, and training exports them
as the policy's own samples, with logprobs of a distribution they were not drawn from.
Success of the attack: a turn drawn under harness-chosen sampling is recorded exactly like
one drawn under the run's. The fix needs the run's sampling settings in the proxy (a turn
that departs from them is refused or recorded as constrained, with what it used), which
touches the harness, the proxy and the exports; until then an expected failure.
"""

from __future__ import annotations

import pytest
from test_proxy_malformed_fields import MESSAGES, TOKEN, post

from gymforge.serve.proxy.server import ProxyConfig, ProxyServer
from gymforge.testing.openai_server import OpenAITestServer

RESHAPED = {"temperature": 0.05, "top_k": 1, "min_p": 0.9, "max_tokens": 16}


def _recorded(extra: dict[str, object], episode: str) -> dict[str, object]:
    with OpenAITestServer() as upstream:
        config = ProxyConfig(upstream=upstream.base_url, token=TOKEN)
        with ProxyServer(config) as proxy:
            url = proxy.open_episode(episode) + "/chat/completions"
            status, _ = post(url, {"model": "m", "messages": MESSAGES, **extra})
            if status != 200:
                return {"refused": status}
            [turn] = proxy.transcript(episode).turns
            record = turn.as_record()
    return {k: v for k, v in record.items() if k not in ("response_message",)}


@pytest.mark.xfail(
    strict=True,
    reason="the proxy forwards temperature/top_k/top_p/min_p and records the turn as plain "
    "model tokens without them (needs the run's sampling in the proxy)",
)
def test_reshaped_sampling_is_not_recorded_as_the_models_own() -> None:
    plain = _recorded({"max_tokens": 16}, "ep-plain")
    reshaped = _recorded(RESHAPED, "ep-reshaped")
    print("plain:", plain.get("capture_level"), "reshaped:", reshaped)
    assert "refused" in reshaped or reshaped.get("capture_level") != "tokens", reshaped
