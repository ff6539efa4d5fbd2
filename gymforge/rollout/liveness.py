"""Whether a model turn past ``call_timeout`` on every attempt was a long answer or a stall.

Both look the same from the turn itself: no answer within ``call_timeout``, attempt after
attempt. A long answer is the policy's output (it generated up to ``max_tokens`` slower than
``call_timeout`` allows), and the episode counts it as failed; a stalled server is
infrastructure, and the episode is retried. After the agent acted, the episode counts it
either way (``rollout.episode.run_episode``). Before, a policy that answered at length only
on the tasks it would fail would take them out of the count, were every such turn a stall;
a hung server's episodes must not be scored as the policy's failures either. So a timed-out
turn is judged by what the server did while the turn waited (:func:`turn_with_retries`,
which sets the ``TurnTimedOut``'s ``answering``):

1. **Other turns answered during every attempt.** The factory (the run's shared client)
   counts the model turns its server answered in this process
   (``ServerFactory.turns_answered``, monotonic). A count that moved during each of the
   turn's attempts (from its start to the next one's, the last to its timeout) is a server
   generating throughout, whose answer to this turn was too long to wait for. Each attempt,
   not just the whole wait: a server that hangs mid-run answered others before it hung, and
   its turns in flight then must not be counted (their attempts after the hang see nothing).
2. **One token answered.** Without that (one turn in flight, or every turn in flight a long
   one, or a lull), and only for an episode's first turn (after it the evidence changes
   nothing): the same request, asking for one token, is sent once, bounded by
   ``call_timeout``. It has the turn's prompt, endpoint, request path and format (chat or
   token ids, the lean client or the SDK's), but its length is no longer the policy's to
   choose. Read as a turn is read, it is a server generating; an error status, a bad answer
   or no answer in time is no evidence.

Only model turns count (``/tokenize`` and ``/v1/models``, which a vLLM front end answers while
its engine is hung, do not), and only answers read as turns (2xx, with choices). Neither piece
of evidence: a stall, retried as it always was.

The count lives on the factory, so it is per process (a pickled factory starts at 0): a Ray
or Redis worker counts the turns of its own episodes, and the one-token request covers a
worker with nothing else in flight.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from gymforge.rollout.deadlines import within
from gymforge.rollout.server import (
    Answer,
    Backoff,
    PolicyTimedOut,
    Rejection,
    ServerFactory,
    call_with_retries,
)

__all__ = ["PROBE_TOKENS", "turn_with_retries"]

log = logging.getLogger("gymforge.server_policy")

PROBE_TOKENS = 1
"""The ``max_tokens`` of the request that asks whether the server is generating at all."""


async def turn_with_retries(
    factory: ServerFactory,
    rng: Backoff,
    send: Callable[[int | None], Awaitable[Answer]],
    max_tokens: int | None,
    hint: Rejection | None = None,
    *,
    first: bool = False,
) -> tuple[Answer, str | None]:
    """``send(max_tokens)``, a model turn's request, with the retry policy
    (``call_with_retries``), counted in ``factory.turns_answered`` once answered. When every
    attempt ran past ``call_timeout`` the ``PolicyTimedOut`` raised says whether the server
    was seen generating meanwhile (``answering``: module docstring); ``first``: the
    episode's first turn, for which a timeout with no other turn answered asks the server
    for one token (``send(PROBE_TOKENS)``)."""
    starts: list[int] = []  # the count when each attempt began

    def attempt() -> Awaitable[Answer]:
        starts.append(factory.turns_answered)
        return send(max_tokens)

    try:
        answer = await call_with_retries(factory, rng, attempt, hint)
    except PolicyTimedOut as err:
        # an attempt's window runs to the next one's start (its backoff wait included)
        ends = [*starts[1:], factory.turns_answered]
        seen = "other turns" if all(e > s for s, e in zip(starts, ends, strict=True)) else None
        if seen is None and first and max_tokens != PROBE_TOKENS:
            seen = "the same request for one token" if await _one_token(factory, send) else None
        err.answering = seen is not None
        if seen is not None:
            log.info(
                "%s: a turn ran past call_timeout on every attempt while the server answered "
                "%s: the policy's long answer (turn_timeout)",
                factory.model,
                seen,
            )
        raise
    factory.turns_answered += 1
    return answer


async def _one_token(
    factory: ServerFactory, send: Callable[[int | None], Awaitable[object]]
) -> bool:
    """Whether the server answers ``send(PROBE_TOKENS)`` within ``call_timeout``, once."""
    try:
        await within(factory.retry.call_timeout, lambda: send(PROBE_TOKENS))
    except Exception:  # any failure is no evidence (cancellation is not caught)
        return False
    return True
