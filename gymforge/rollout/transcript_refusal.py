"""Whose fault it is when the policy's own server refuses a request once the agent acted.

From the agent's second turn on, every request to the policy's server holds the agent's
output: its replies and tool calls, and the tool results that echo them. A server behind a
moderation or content policy (a hosted API, a gateway's guardrail in front of vLLM) refuses
a request whose text it will not read with a 4xx that is not retried (OpenAI's
``content_policy_violation``, Azure's ``content_filter``, a guardrail in any wording), and a
refused request is a configuration mistake (``PolicyRequestRejected``) that stops the run.
Were that the whole rule, a policy failing a task could end the run (in a trainer, the
batch), its failing episode and every unplayed one unscored, by writing what the moderation
trips on (tests/redteam/test_policy_server_refuses_agent_text.py).

So a refusal after the agent acted (a full context is not one: it is counted already,
``context_length``) is judged by the rule a counterpart's model is judged by
(:func:`gymforge.core.blame.blame_text`): the same server is asked the episode's first
prompt (the reset observation, before any agent action: the first turn's own request, on
its endpoint, request path and format) for one token, with the turn's retry policy (each
attempt bounded by ``call_timeout``):

- answered: the agent's text was refused, and the episode ends truncated, a counted failure
  (:class:`~gymforge.core.errors.TranscriptRefused`, ``transcript_refused``);
- refused too (or a full context, or no answer in time): the configuration is at fault (a
  wrong model name, a revoked key, a content policy that refuses the task itself): the run
  stops as before, with a message saying a request without the agent's text is refused too;
- the probe's own server failure (5xx, 429, a dropped connection, after the retries): raised
  as it is, the episode retried.

A server failure of a turn after the agent acted (a 5xx, a cut connection, a bad answer,
on every attempt; not a stall, which is counted already, nor a 429) can be the agent's
text's doing as well: a prompt the engine's template or tokenizer fails on, a gateway that
answers 502 or resets for a body its filter will not pass. Retried as a failing server, the
episode was given up unwritten and a few in a row stopped the run
(tests/redteam/test_policy_server_fails_on_agent_text.py). So it is judged by
:func:`~gymforge.core.blame.blame_failure` (:func:`judge_failure`): the episode's first
prompt, for one token, with the turn's retry policy; failed in any way, the turn's failure
is raised as it was (retried); answered, the turn is asked once more (the policy left as it
was), and its answer is the turn's, or its server failure the episode's counted end
(:class:`~gymforge.core.errors.TranscriptFailed`, ``transcript_failed``): failed on both
sides of an answer without the agent's text, not an outage that ended in between.

The episode's first turn is judged so too: its request holds none of the agent's text, but
a server can fail on the answer it generates (vLLM's tool-call parser raising on a
malformed call answers 500; a gateway cuts an answer its filter will not pass), and with
the same sampling seed on every attempt. Retried as an outage, the episode was given up
unwritten and a few in a row stopped the run
(tests/redteam/test_policy_server_fails_on_first_output.py). The probe is then the turn's
own request for one token: answered, one token is not the answer that fails. Only once
the server answered a whole turn of the run (``ServerFactory.turns_answered``, in this
process): a server that fails every answer (a tool-call parser configured for another
model) fails the configuration, not the policy, and stops the run as before, loud.

Both server policies play each turn through :func:`judged`: any request of the turn counts
(the completion, and for ``vllm:`` the ``/tokenize`` renderings of the environment's new
messages, which hold the tool results), and only a refusal the server answered with (a
``PolicyRequestRejected`` with an HTTP status: never a configuration the policy refused
itself, such as no bound for ``max_tokens``). Before the agent acted (no turn of the
episode answered yet: ``TurnWatch.first``) the requests hold no agent text, but a server
refuses the answer it would give too: vLLM answers a ``ValueError`` raised while it reads
the finished answer (a parser's) with a 400, an output guardrail refuses with one. Read as
the configuration's mistake, such a first answer stopped the run
(tests/redteam/test_policy_server_refuses_first_output.py). So a refusal of the first turn
is judged as its server failure is (:func:`judge_failure`, once the server answered a
whole turn of the run and its bound is known to be accepted,
``ServerFactory.bound_accepted``, else a bound above a hosted API's maximum, "max_tokens is
too large", would be counted against the policy): its prompt for one token refused too is
the configuration's mistake, which stops the run (:func:`~gymforge.core.blame.blame_text`);
answered, the turn is asked once more, and its refusal is the episode's counted
``transcript_refused``. A refusal before the server answered any whole turn stops the run
as it always did.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from gymforge.core.blame import blame_failure, blame_text, server_fault
from gymforge.core.errors import InfraError, TranscriptFailed, TranscriptRefused
from gymforge.rollout.liveness import PROBE_TOKENS, SMALL_TOKENS, TurnWatch, refused_for_bound
from gymforge.rollout.server import (
    Backoff,
    PolicyRequestRejected,
    PolicyServerError,
    ServerFactory,
    call_with_retries,
)

__all__ = ["ask_opening", "judge_failure", "judge_refusal", "judged"]

log = logging.getLogger("gymforge.server_policy")

Turn = TypeVar("Turn")


async def judged(watch: TurnWatch, rng: Backoff, turn: Callable[[], Awaitable[Turn]]) -> Turn:
    """``await turn()`` (a policy's turn, its requests kept in ``watch``; a policy left as
    it was when it fails, so it may be asked again); once the episode's first turn was
    answered, a refusal of the server's is raised as :func:`judge_refusal` judges it; a
    server failure (:func:`~gymforge.core.blame.server_fault`) of any turn, and a refusal of
    the first one, as :func:`judge_failure` does; both ask ``watch.opening`` for one
    token."""
    try:
        return await turn()
    except PolicyServerError as err:
        if not _judged_by_asking_again(watch, err):
            if isinstance(err, PolicyRequestRejected):
                raise await _refusal(watch, rng, err) from err
            raise
        failure = err
    return await judge_failure(watch, rng, failure, turn)


def _judged_by_asking_again(watch: TurnWatch, err: PolicyServerError) -> bool:
    """Whether the turn's ``err`` is judged by :func:`judge_failure`: a server failure of
    any turn, or the server's refusal of the episode's first turn (which holds none of the
    agent's text: refused for the answer it generates, or for the prompt, which the
    one-token probe tells apart, or for its bound, which a turn answered asking as many
    tokens rules out); only with the episode's first request kept and the server known to
    answer whole turns."""
    if watch.opening is None or not _answers_turns(watch):
        return False
    if isinstance(err, PolicyRequestRejected):
        return watch.first and _answer_refused(watch, err)
    return server_fault(err)


def _answer_refused(watch: TurnWatch, err: PolicyRequestRejected) -> bool:
    """Whether ``err``, refusing the episode's first turn, may be a refusal of the answer
    it generates: the server's refusal (an HTTP status), the turn's bound known to be
    accepted (``ServerFactory.bound_accepted``)."""
    return err.status is not None and watch.factory.bound_accepted(watch.opening_tokens)


def _answers_turns(watch: TurnWatch) -> bool:
    """Whether the server is known to answer whole turns: the agent acted (a turn of this
    episode was answered), or on the episode's first turn another turn of the run was (the
    factory's count, per process)."""
    return not watch.first or watch.factory.turns_answered > 0


async def _refusal(watch: TurnWatch, rng: Backoff, err: PolicyRequestRejected) -> Exception:
    """What a refusal of the turn is raised as: itself before the agent acted (or a refusal
    that is not the server's), else :func:`judge_refusal`'s judgement."""
    if watch.first or watch.opening is None or err.status is None:
        return err  # no agent text in the request, or not the server's refusal
    return await judge_refusal(watch.factory, rng, err, lambda: ask_opening(watch, rng))


async def ask_opening(watch: TurnWatch, rng: Backoff) -> None:
    """Ask the episode's first request (``watch.opening``, none of the agent's text) for one
    token, with the turn's retry policy; refused for so small a bound (a server's minimum
    ``max_tokens``), asked again with the bound it was answered with at the episode's start
    (``watch.opening_tokens``), or on the episode's first turn, whose own request that is
    (the answer being judged, generated again), for :data:`SMALL_TOKENS` at most (a short
    answer is not the one that fails). Raises as the request failed."""
    opening, factory, bound = watch.opening, watch.factory, watch.opening_tokens
    assert opening is not None  # judged's guard
    if watch.first:
        bound = min(SMALL_TOKENS, bound or SMALL_TOKENS)
    try:
        await call_with_retries(factory, rng, lambda: opening(PROBE_TOKENS))
    except PolicyRequestRejected as err:
        if err.status is None or not refused_for_bound(err.status) or bound == PROBE_TOKENS:
            raise
        log.info("%s: one token refused (%s); the first prompt for %s", factory.model, err, bound)
        await call_with_retries(factory, rng, lambda: opening(bound))


async def judge_failure(
    watch: TurnWatch, rng: Backoff, failure: PolicyServerError, turn: Callable[[], Awaitable[Turn]]
) -> Turn:
    """The turn's answer, or its counted end, once the server failed it on every attempt
    (a 5xx, a cut connection, a bad answer) or refused the episode's first turn: unless the
    server answers the episode's first prompt for one token, ``failure`` is raised as it is
    (retried; a refusal stops the run, the probe refused too being the configuration's
    mistake); then the turn is asked once more, and a server failure or refusal of that is
    the agent's doing (its text, or on the first turn the answer it generates), the
    episode's counted end (:class:`~gymforge.core.errors.TranscriptFailed`,
    :class:`~gymforge.core.errors.TranscriptRefused`)."""
    factory, first = watch.factory, watch.first
    if isinstance(failure, PolicyRequestRejected):
        await blame_text(failure, lambda: ask_opening(watch, rng), _configuration)
    else:
        await blame_failure(failure, lambda: ask_opening(watch, rng))
    done = "what the agent generates" if first else "the agent's text"
    try:
        return await turn()
    except PolicyRequestRejected as err:
        if not first or not _answer_refused(watch, err):
            raise await _refusal(watch, rng, err) from err
        log.info(
            "%s: the episode's first turn refused, its prompt answered for one token, "
            "refused again: the server refuses %s, counted",
            factory.model,
            done,
        )
        raise TranscriptRefused(
            f"{err} (the episode's first turn, asked twice; its prompt, for one token, is "
            f"answered in between: the server refuses {done})"
        ) from err
    except PolicyServerError as err:
        if not server_fault(err):
            raise
        log.info(
            "%s: a turn the server failed, the episode's first prompt answered for one token, "
            "failed again: the server fails on %s, counted",
            factory.model,
            done,
        )
        raise TranscriptFailed(
            f"{err} (asked twice; the episode's first prompt, for one token, is answered in "
            f"between: the server fails on {done})"
        ) from err


async def judge_refusal(
    factory: ServerFactory,
    rng: Backoff,
    refusal: PolicyRequestRejected,
    first_prompt: Callable[[], Awaitable[Any]],
) -> TranscriptRefused:
    """The episode's counted end when the server answers ``first_prompt()`` (the episode's
    first request, asking one token: :func:`ask_opening`): ``refusal`` was of the agent's
    text. Raises the
    configuration's mistake (a ``PolicyRequestRejected`` saying so) when that is refused,
    finds the context full or times out too, and the probe's own server failure as it is
    (module docstring)."""

    await blame_text(refusal, first_prompt, _configuration)
    log.info(
        "%s: a request refused after the agent acted, the episode's first prompt answered: "
        "the agent's text was refused, counted",
        factory.model,
    )
    return TranscriptRefused(
        f"{refusal} (after the agent acted; the episode's first prompt, without the agent's "
        "text, is answered: the agent's text was refused)"
    )


def _configuration(failure: InfraError) -> InfraError:
    """``failure`` worded as the configuration's mistake it is (not retryable: the run
    stops)."""
    return PolicyRequestRejected(
        "a request without the agent's text too (the episode's first prompt, for one token) "
        "is refused: the configuration's mistake, not the agent's (check the model name, the "
        f"key and what the server's content policy refuses); the transcript's refusal: {failure}",
        status=getattr(failure, "status", None),
    )
