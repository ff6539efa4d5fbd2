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
(:func:`gymforge.kit.blame.blame_text`): the same server is asked the episode's first
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

Both server policies play each turn through :func:`judged`: any request of the turn counts
(the completion, and for ``vllm:`` the ``/tokenize`` renderings of the environment's new
messages, which hold the tool results), and only a refusal the server answered with (a
``PolicyRequestRejected`` with an HTTP status: never a configuration the policy refused
itself, such as no bound for ``max_tokens``). Before the agent acted (no turn of the
episode answered yet: ``TurnWatch.first``) the requests hold no agent text, and a refusal
stops the run as it always did.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from gymforge.core.errors import InfraError, TranscriptRefused
from gymforge.kit.blame import blame_text
from gymforge.rollout.liveness import PROBE_TOKENS, TurnWatch
from gymforge.rollout.server import Backoff, PolicyRequestRejected, ServerFactory, call_with_retries

__all__ = ["judge_refusal", "judged"]

log = logging.getLogger("gymforge.server_policy")

Turn = TypeVar("Turn")


async def judged(watch: TurnWatch, rng: Backoff, turn: Awaitable[Turn]) -> Turn:
    """``await turn`` (a policy's turn, its requests kept in ``watch``); a refusal of the
    server's once the episode's first turn was answered is raised as
    :func:`judge_refusal` judges it, asking ``watch.opening`` for one token."""
    try:
        return await turn
    except PolicyRequestRejected as err:
        opening = watch.opening
        if watch.first or opening is None or err.status is None:
            raise  # no agent text in the request, or not the server's refusal
        raise await judge_refusal(watch.factory, rng, err, lambda: opening(PROBE_TOKENS)) from err


async def judge_refusal(
    factory: ServerFactory,
    rng: Backoff,
    refusal: PolicyRequestRejected,
    first_prompt: Callable[[], Awaitable[Any]],
) -> TranscriptRefused:
    """The episode's counted end when the server answers ``first_prompt()`` (the episode's
    first request, asking one token): ``refusal`` was of the agent's text. Raises the
    configuration's mistake (a ``PolicyRequestRejected`` saying so) when that is refused,
    finds the context full or times out too, and the probe's own server failure as it is
    (module docstring)."""

    async def without_text() -> None:
        await call_with_retries(factory, rng, first_prompt)

    await blame_text(refusal, without_text, _configuration)
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
