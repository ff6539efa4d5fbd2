"""Whose fault a model's failure on a request is, when the request holds the agent's text.

Three models read what the agent wrote: a counterpart's (the simulated user or requester,
``gymforge.world.counterpart``) reads each agent message, the policy's own server reads the
whole transcript from the agent's second turn on (``gymforge.rollout.transcript_refusal``),
and a judge model reads the answer (``gymforge.verify.llm_judge.rubric_judge``).
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

A server failure of the request holding the agent's text (:func:`server_fault`: a 5xx, a
cut connection, a bad answer, after the retries; not a rate limit, which is load) can be
that text's doing too (a prompt vLLM's template or tokenizer fails on, a gateway whose
filter answers 502 or resets the connection): retried as a failing server, the episode
would be given up unwritten, or stop the run. It is the agent's when the model answers the
probe (:func:`blame_failure`) and the request holding the text, asked once more after it,
fails again (the caller's to ask): a failure on both sides of an answer without the text,
not an outage that ended. A probe that fails in any way is no such evidence: the failure is
raised as it was, retried.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal

from gymforge.core.errors import InfraError, PolicyStopped, TurnTimedOut

__all__ = [
    "FAILED",
    "RATE_LIMITED",
    "REFUSED",
    "TIMED_OUT",
    "TextFault",
    "blame_failure",
    "blame_text",
    "repeated_fault",
    "server_fault",
    "text_fault",
]

TextFault = Literal["refused", "timed_out", "failed"]
REFUSED: TextFault = "refused"
TIMED_OUT: TextFault = "timed_out"
FAILED: TextFault = "failed"
RATE_LIMITED = 429


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


def server_fault(err: InfraError) -> bool:
    """Whether ``err``, raised by a model on a request holding the agent's text after its
    retries, is a server failure that text may have caused (to be confirmed by
    :func:`blame_failure` and the request asked once more): retryable, not a stall
    (:func:`text_fault` names those) and not a rate limit (429: load, not the text)."""
    return (
        err.retryable
        and not isinstance(err, TurnTimedOut)
        and getattr(err, "status", None) != RATE_LIMITED
    )


def repeated_fault(err: InfraError) -> TextFault | None:
    """How the request holding the agent's text failed when asked once more, after it failed
    (a :func:`server_fault`) and the probe was answered: a stall or a refusal
    (:func:`text_fault`) is the text's as much as a server failure again (``FAILED``), since
    the same model answered without the text in between; None for a rate limit (load),
    raised as it is. A model that ends each ask on a long answer in one of two ways (a
    gateway's 502 or the caller's timeout, whichever comes first) was otherwise retried."""
    return text_fault(err) or (FAILED if server_fault(err) else None)


async def blame_failure(failure: InfraError, without_text: Callable[[], Awaitable[object]]) -> None:
    """Return when ``without_text()``, the same model asked with none of the agent's text,
    answers: the server answers without the agent's text what it failed with it (a
    :func:`server_fault`). Raise ``failure`` as it is (retried) when the probe fails in any
    way: a server failing, stalled, refusing or full is no evidence against the text."""
    try:
        await without_text()
    except (InfraError, PolicyStopped) as err:
        raise failure from err
