"""Whether a model turn that outran its time was a long answer or a stalled server.

Both look the same from the turn itself: no answer within ``call_timeout``, attempt after
attempt (or none before ``--episode-timeout`` cut the turn short). A long answer is the
policy's output (it generated up to ``max_tokens`` slower than the time allows), and the
episode counts it as failed; a stalled server is infrastructure, and the episode is retried.
After the agent acted, the episode counts it either way (``rollout.episode.run_episode``).
Before, a policy that answered at length only on the tasks it would fail would take them out
of the count, were every such turn a stall; a hung server's episodes must not be scored as
the policy's failures either. So a turn that outran its time before the agent acted is
judged by what the server did while the turn waited (:meth:`TurnWatch.answering`: the
``TurnTimedOut``'s ``answering``, and the policy's ``server_answering`` the runner asks when
the episode's time ran out):

1. **Other turns answered during every attempt.** The factory (the run's shared client)
   counts the model turns its server answered in this process
   (``ServerFactory.turns_answered``, monotonic). A count that moved during each of the
   turn's attempts (from its start to the next one's, the last to its end) is a server
   generating throughout, whose answer to this turn was too long to wait for. Each attempt,
   not just the whole wait: a server that hangs mid-run answered others before it hung, and
   its turns in flight then must not be counted (their attempts after the hang see nothing).
2. **One token answered.** Without that (one turn in flight, or every turn in flight a long
   one, or a lull), and only for an episode's first turn (after it the evidence changes
   nothing): the same request, asking for one token, is sent once, bounded by
   ``call_timeout``. It has the turn's prompt, endpoint, request path and format (chat or
   token ids, the lean client or the SDK's), but its length is no longer the policy's to
   choose. Read as a turn is read, it is a server generating; an error status, a bad answer
   or no answer in time is no evidence. A server that refuses so small a bound (a 4xx of a
   minimum ``max_tokens``) is asked once more for :data:`SMALL_TOKENS`.

Only model turns count (``/tokenize`` and ``/v1/models``, which a vLLM front end answers while
its engine is hung, do not), and only answers read as turns (2xx, with choices). Neither piece
of evidence: a stall, retried as it always was.

The count lives on the factory, so it is per process (a pickled factory starts at 0): a Ray
or Redis worker counts the turns of its own episodes, and the one-token request covers a
worker with nothing else in flight. The turn in flight is the policy's (:class:`TurnWatch`),
so the judgement is made where the episode runs.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import openai

from gymforge.rollout.deadlines import within
from gymforge.rollout.server import (
    RETRY_STATUS,
    Answer,
    Backoff,
    PolicyTimedOut,
    Rejection,
    ServerFactory,
    call_with_retries,
)

__all__ = [
    "PROBE_TOKENS",
    "SMALL_TOKENS",
    "TurnWatch",
    "WatchedTurns",
    "refused_for_bound",
    "turn_with_retries",
]

log = logging.getLogger("gymforge.server_policy")

PROBE_TOKENS = 1
"""The ``max_tokens`` of the request that asks whether the server is generating at all."""
SMALL_TOKENS = 16
"""The ``max_tokens`` that request asks again with when the server refuses one token (a
minimum bound of its own; vLLM's completions endpoint generates 16 by default)."""

Send = Callable[[int | None], Awaitable[Any]]
"""A turn's request, asking for at most so many tokens (None: the server's default)."""


class TurnWatch:
    """One policy's model turn in flight, kept by :func:`turn_with_retries`: what judges it
    a long answer or a stall once it timed out (module docstring), whether every attempt
    ran past ``call_timeout`` or the episode's ``--episode-timeout`` cut it short
    (:meth:`answering`). ``first``: no turn of the episode was answered yet (the agent has
    not acted); :meth:`start` at every episode's start. ``opening`` is the episode's first
    request, kept for the episode: none of the agent's text, what a refusal of a later one
    is judged by (:mod:`gymforge.rollout.transcript_refusal`); so a policy's ``send`` must
    send the request as it was when the turn began, however its transcript grows after."""

    def __init__(self, factory: ServerFactory) -> None:
        self.factory = factory
        self.first = True
        self.opening: Send | None = None
        self.opening_tokens: int | None = None  # the max_tokens it was answered with
        self._send: Send | None = None
        self._tokens: int | None = None
        self._starts: list[int] = []  # the count when each attempt began

    def start(self) -> None:
        """A new episode: no turn in flight, none answered."""
        self.first, self._send, self._starts, self.opening = True, None, [], None
        self.opening_tokens = None

    def begin(self, send: Send, max_tokens: int | None) -> Callable[[], Awaitable[Any]]:
        """A turn's request about to be sent: the attempt ``call_with_retries`` makes."""
        self._send, self._tokens, self._starts = send, max_tokens, []
        if self.first:
            self.opening, self.opening_tokens = send, max_tokens
        starts, factory = self._starts, self.factory

        def attempt() -> Awaitable[Any]:
            starts.append(factory.turns_answered)
            return send(max_tokens)

        return attempt

    def answered(self) -> None:
        """The turn in flight was answered: counted (and its bound, when the widest yet),
        and the next one is not the first."""
        factory, tokens = self.factory, self._tokens
        factory.turns_answered += 1
        if tokens is not None and tokens > factory.widest_answered:
            factory.widest_answered = tokens
        self.first, self._send = False, None

    def others_answered(self) -> bool:
        """Another turn was answered during each attempt of the turn in flight (an
        attempt's window runs to the next one's start, its backoff wait included; the
        last one's to now)."""
        starts = self._starts
        ends = [*starts[1:], self.factory.turns_answered]
        return bool(starts) and all(e > s for s, e in zip(starts, ends, strict=True))

    async def answering(self) -> bool:
        """Whether the server was seen generating while the turn in flight waited: other
        turns answered during each attempt, or else, for the episode's first turn, the same
        request for one token answered within ``call_timeout`` (sent once). False with no
        turn in flight. Never raises but for a cancellation."""
        send = self._send
        if send is None or not self._starts:
            return False
        seen = "other turns" if self.others_answered() else None
        if seen is None and self.first and self._tokens != PROBE_TOKENS:
            seen = "the same request for one token" if await self._one_token(send) else None
        if seen is not None:
            log.info(
                "%s: a turn outran its time while the server answered %s: the policy's "
                "long answer, counted",
                self.factory.model,
                seen,
            )
        return seen is not None

    async def _one_token(self, send: Send) -> bool:
        """Whether ``send`` for one token is answered within ``call_timeout``; refused for
        so small a bound, asked again once for :data:`SMALL_TOKENS` (at most the turn's)."""
        timeout = self.factory.retry.call_timeout
        try:
            await within(timeout, lambda: send(PROBE_TOKENS))
        except openai.APIStatusError as err:
            small = min(SMALL_TOKENS, self._tokens or SMALL_TOKENS)
            if not refused_for_bound(err.status_code) or small <= PROBE_TOKENS:
                return False
            try:
                await within(timeout, lambda: send(small))
            except Exception:  # no evidence either
                return False
        except Exception:  # any failure is no evidence (cancellation is not caught)
            return False
        return True


def refused_for_bound(status: int) -> bool:
    """Whether a request answered ``status`` may have been refused for its ``max_tokens``
    alone (a 4xx that is not retried): one the server's own minimum bound refuses, asked
    again with a larger one."""
    return 400 <= status < 500 and status not in RETRY_STATUS


class WatchedTurns:
    """A server policy whose turns go through its ``watch`` (:func:`turn_with_retries`):
    it is a :class:`~gymforge.core.policy.StallJudgingPolicy`."""

    watch: TurnWatch

    async def server_answering(self) -> bool:
        """Whether the server was seen generating while the turn in flight waited
        (:meth:`TurnWatch.answering`)."""
        return await self.watch.answering()


async def turn_with_retries(
    watch: TurnWatch,
    rng: Backoff,
    send: Callable[[int | None], Awaitable[Answer]],
    max_tokens: int | None,
    hint: Rejection | None = None,
) -> tuple[Answer, str | None]:
    """``send(max_tokens)``, a model turn's request, with the retry policy
    (``call_with_retries`` on ``watch.factory``), counted in ``turns_answered`` once
    answered. When every attempt ran past ``call_timeout`` the ``PolicyTimedOut`` raised
    says whether the server was seen generating meanwhile (``answering``:
    :meth:`TurnWatch.answering`)."""
    attempt = watch.begin(send, max_tokens)
    try:
        answer: tuple[Answer, str | None] = await call_with_retries(
            watch.factory, rng, attempt, hint
        )
    except PolicyTimedOut as err:
        err.answering = await watch.answering()
        raise
    watch.answered()
    return answer
