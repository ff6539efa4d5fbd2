"""Whose fault a model's failure on a request is, when the request holds the agent's text.

Two models read what the agent wrote: a counterpart's (the simulated user or requester,
``gymforge.world.counterpart``) reads each agent message, and the policy's own server reads
the whole transcript from the agent's second turn on (``gymforge.rollout.transcript_refusal``).
A failure of that model the agent's text can cause (:func:`text_fault`: a refusal, a 4xx not
retried, such as a moderation or content-policy refusal; a stall, every attempt past the call
timeout) is the agent's outcome, counted, only when the same model answers a request with
none of the agent's text in it (the probe): else a policy could end the run, or take its
episode out of the count, by writing what the model will not read. When the probe fails too
in such a way (or finds the context full), the configuration or the server is at fault (a
wrong model name, a revoked key, instructions the moderation trips on, a server that
stalls): :func:`blame_text` raises what the caller makes of that. A server failure of the
probe's own (5xx, 429, a dropped connection, after the retries) says nothing either way: it
is raised as it is, and the episode retried.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal

from gymforge.core.errors import InfraError, PolicyStopped, TurnTimedOut

__all__ = ["REFUSED", "TIMED_OUT", "TextFault", "blame_text", "text_fault"]

TextFault = Literal["refused", "timed_out"]
REFUSED: TextFault = "refused"
TIMED_OUT: TextFault = "timed_out"


def text_fault(err: InfraError) -> TextFault | None:
    """How ``err``, raised by a model on a request holding the agent's text, may be that
    text's doing (to be confirmed by :func:`blame_text`): ``timed_out`` for a stall
    (``TurnTimedOut``), ``refused`` for a refusal (not retryable); None for a server failure
    (retried), which never is."""
    if isinstance(err, TurnTimedOut):
        return TIMED_OUT
    return None if err.retryable else REFUSED


async def blame_text(
    failure: InfraError,
    without_text: Callable[[], Awaitable[object]],
    configuration: Callable[[InfraError], InfraError],
) -> None:
    """Return when ``without_text()``, the same model asked with none of the agent's text,
    answers: the agent's text caused ``failure`` (one :func:`text_fault` names). Raise
    ``configuration(failure)`` when the probe fails as text could make it (a refusal, a
    stall, a full context): the agent's text is not the cause; or the probe's own server
    failure, as it is (retried)."""
    try:
        await without_text()
    except PolicyStopped as err:  # a full context with none of the agent's text
        raise configuration(failure) from err
    except InfraError as err:
        if text_fault(err) is None:
            raise
        raise configuration(failure) from err
