"""``rollout.liveness``: a model turn past ``call_timeout`` on every attempt is judged a long
answer (``answering``) only on evidence that the server was generating while it waited.

The end-to-end attack and its guards against counting infrastructure are
``tests/redteam/test_policy_first_turn_outruns_call_timeout.py``; these are the rule's
cases without a server (``send`` stands in for the request, and ``factory.turns_answered``
moved by hand for another turn answered)."""

from __future__ import annotations

import asyncio
import pickle
import random

import pytest

from gymforge.rollout.liveness import PROBE_TOKENS, TurnWatch, turn_with_retries
from gymforge.rollout.openai_policy import OpenAIPolicyFactory, Retry
from gymforge.rollout.server import PolicyTimedOut

RETRY = Retry(max_attempts=3, call_timeout=0.05, base_delay=0.001, max_delay=0.001)
HELD = 30.0


def factory() -> OpenAIPolicyFactory:
    return OpenAIPolicyFactory("m", base_url="http://127.0.0.1:9/v1", retry=RETRY)


def judge(
    f: OpenAIPolicyFactory,
    others: list[bool],
    *,
    first: bool = True,
    probe_answered: bool = False,
    max_tokens: int | None = 512,
) -> tuple[bool, list[int | None]]:
    """``answering`` of a turn whose every attempt is held; ``others[i]``: another turn is
    answered during attempt ``i``. Also the ``max_tokens`` of every request sent."""
    sent: list[int | None] = []

    async def send(tokens: int | None) -> str:
        sent.append(tokens)
        if tokens == PROBE_TOKENS and probe_answered:
            return "one token"
        attempt = sum(t != PROBE_TOKENS for t in sent) - 1
        if tokens != PROBE_TOKENS and others[attempt]:
            f.turns_answered += 1
        await asyncio.sleep(HELD)
        raise AssertionError("not reached: the attempt is timed out")

    async def go() -> bool:
        watch = TurnWatch(f)
        watch.first = first
        with pytest.raises(PolicyTimedOut) as caught:
            await turn_with_retries(watch, random.Random(0), send, max_tokens)
        return caught.value.answering

    return asyncio.run(go()), sent


def test_other_turns_answered_during_every_attempt_are_evidence() -> None:
    answering, sent = judge(factory(), [True, True, True])
    assert answering and sent == [512, 512, 512]  # no one-token request needed


def test_an_attempt_with_nothing_answered_asks_for_one_token() -> None:
    # others answered only before the server hung (the last attempt saw nothing)
    answering, sent = judge(factory(), [True, True, False])
    assert not answering and sent == [512, 512, 512, PROBE_TOKENS]
    answering, sent = judge(factory(), [True, False, True], probe_answered=True)
    assert answering and sent == [512, 512, 512, PROBE_TOKENS]


def test_no_one_token_request_after_the_first_turn_or_for_a_one_token_turn() -> None:
    answering, sent = judge(factory(), [False] * 3, first=False, probe_answered=True)
    assert not answering and sent == [512] * 3
    answering, sent = judge(factory(), [False] * 3, max_tokens=1)
    assert not answering and sent == [1] * 3


def test_an_answered_turn_is_counted() -> None:
    f = factory()

    async def send(tokens: int | None) -> str:
        return "answer"

    watch = TurnWatch(f)
    answer, _ = asyncio.run(turn_with_retries(watch, random.Random(0), send, 512))
    assert answer == "answer" and f.turns_answered == 1
    assert not watch.first  # the next turn is not the episode's first
    assert not asyncio.run(watch.answering())  # no turn in flight: nothing to judge
    watch.start()
    assert watch.first


def test_the_evidence_survives_pickling_and_a_pickled_factory_counts_afresh() -> None:
    err = PolicyTimedOut("no response", status=None)
    assert not err.answering
    err.answering = True
    assert pickle.loads(pickle.dumps(err)).answering  # a remote worker's report keeps it
    f = factory()
    f.turns_answered = 7
    assert pickle.loads(pickle.dumps(f)).turns_answered == 0  # per process
