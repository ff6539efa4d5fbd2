"""Attack: on a server with a minimum ``max_tokens``, write a first answer the server refuses
or fails on, and stop the run or take the episode out of the count.

A refusal or server failure of the episode's first turn is judged by asking its prompt for
one token (``rollout.transcript_refusal``): answered, the turn asked once more and refused
again is the policy's counted failure. On a server that will not generate so little (a
gateway's or provider's minimum bound, a 400 naming it), the probe refused for its bound was
asked again with the first request's own bound: on the first turn that request *is* the
turn being judged, so the answer that failed was generated again and failed again. Its
refusal read as the configuration's mistake and stopped the run; its failure was retried as
a failing server and the episode given up unwritten. Success is the run stopped or the
failing episodes missing from the count. The defence: on the first turn the probe refused
for its bound is asked again for :data:`~gymforge.rollout.liveness.SMALL_TOKENS`, a short
answer, never the turn's own request.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import test_policy_server_fails_on_first_output as first_output
import test_policy_server_refuses_agent_text as refusal
import test_policy_server_refuses_first_output as first_refusal
from test_policy_server_refuses_one_token import MINIMUM, with_minimum

from gymforge.core.errors import TRANSCRIPT_FAILED, TRANSCRIPT_REFUSED
from gymforge.rollout.liveness import SMALL_TOKENS
from gymforge.rollout.openai_policy import OpenAIPolicyFactory, Sampling
from gymforge.rollout.vllm_policy import VLLMPolicyFactory

FULL = 100  # the turn's own bound; the answer that fails is longer than SMALL_TOKENS


def _long(body: dict[str, Any]) -> bool:
    return (body.get("max_tokens") or FULL) > SMALL_TOKENS


class RefusesLongAnswer(first_refusal.RefusesAnswer):
    def _refuses(self, body: dict[str, Any]) -> bool:
        return _long(body) and first_output.asks_failing(body, self.failing, False)


class FailsOnLongAnswer(first_output.FailsOnAnswer):
    def _fails(self, body: dict[str, Any]) -> bool:
        return _long(body) and first_output.asks_failing(body, self.failing, False)


@pytest.mark.parametrize(
    ("server", "reason"),
    [(RefusesLongAnswer, TRANSCRIPT_REFUSED), (FailsOnLongAnswer, TRANSCRIPT_FAILED)],
)
@pytest.mark.parametrize("policy", ["openai:m", "vllm:m"])
def test_a_first_answer_refused_on_a_server_with_a_minimum_is_counted(
    tmp_path: Path, server: Any, reason: str, policy: str
) -> None:
    assert MINIMUM <= SMALL_TOKENS < FULL
    srv = server(with_minimum(first_output.respond))
    srv.failing = refusal.prompts(first_refusal.FAILED)
    with srv:
        made = OpenAIPolicyFactory if policy == "openai:m" else VLLMPolicyFactory
        factory = made(
            "m", base_url=srv.base_url, retry=refusal.RETRY, sampling=Sampling(max_tokens=FULL)
        )
        result = refusal.play(tmp_path, factory, first_refusal.ORDER, policy=policy)
    first_output.assert_first_turns_counted(tmp_path, result, reason)
