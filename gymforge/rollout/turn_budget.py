"""How many tokens the next model turn may generate: the ``max_tokens`` of every request.

Left out, ``max_tokens`` is the server's choice, and vLLM's completions endpoint chooses 16:
every ``vllm:`` turn would end on ``length``. Both server policies therefore send the
smallest of the bounds they know (:meth:`TurnBudget.max_tokens`):

- the environment's remaining token budget: ``Budget.max_tokens`` less what the episode
  has used, counted as the environment counts it (each observation's ``tokens``, each
  action's text through the environment's token counter);
- ``--max-tokens`` (``Sampling.max_tokens``), a cap;
- the room left in the model's context, when the policy knows both the prompt's length and
  the context length (``vllm:``: its prompt ids and the ``max_model_len`` vLLM reports).

When a known bound leaves less than one token, no request is sent: the policy raises
``ContextLengthExceeded`` and the episode ends truncated (``context_length``). When no
bound is known (``openai:`` with neither a token budget nor ``--max-tokens``) the field is
left out, and chat endpoints (vLLM's, OpenAI's) default to the rest of the context.

A refusal that the context is full (:mod:`gymforge.rollout.context_full`) stating room for
a shorter completion than was asked is sent once more asking for that room
(:func:`send_within`); any other such refusal ends the episode, never the run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from gymforge.core.errors import ContextLengthExceeded
from gymforge.core.policy import EpisodeContext
from gymforge.core.tokens import ApproxTokenCounter, TokenCounter
from gymforge.core.types import Action, Observation
from gymforge.kit.tool_env import action_text
from gymforge.rollout.context_full import room
from gymforge.rollout.liveness import TurnWatch, turn_with_retries
from gymforge.rollout.server import Answer, Backoff, Rejection


class TurnBudget:
    """One episode's token accounting for ``max_tokens`` (module docstring). ``cap`` is
    ``--max-tokens``; call :meth:`start` at the episode's start, and once a turn's request
    succeeded, :meth:`observe` with its observation and :meth:`acted` with its action (a
    turn whose request failed leaves the account as it was, so a turn asked again is
    counted once)."""

    def __init__(self, cap: int | None) -> None:
        self.cap = cap
        self.limit: int | None = None
        self.used = 0
        self.counter: TokenCounter = ApproxTokenCounter()

    def start(self, ctx: EpisodeContext) -> None:
        """A new episode: the environment's token budget (if it declares one) and counter,
        as its context gives them."""
        self.limit = ctx.max_tokens
        counter = ctx.token_counter
        self.counter = counter if counter is not None else ApproxTokenCounter()
        self.used = 0

    def observe(self, observation: Observation) -> None:
        self.used += observation.tokens

    def acted(self, action: Action) -> None:
        self.used += self.counter.count_text(action_text(action))

    def remaining(self) -> int | None:
        """The environment's token budget left, or None when it declares none."""
        return None if self.limit is None else self.limit - self.used

    def max_tokens(
        self, context_room: int | None = None, observing: Observation | None = None
    ) -> int | None:
        """The ``max_tokens`` to send: the smallest known bound, None when none is known;
        ``observing`` is the turn's observation, counted as used (not yet observed).
        ``ContextLengthExceeded`` when the budget or the context leaves no token."""
        left = self.remaining()
        if left is not None:
            if observing is not None:
                left -= observing.tokens
            _room("the environment's token budget", left)
        cap = self.cap
        if context_room is None:  # the usual turn: no bound but the cap and the budget
            return left if cap is None else cap if left is None else min(cap, left)
        _room("the model's context", context_room)
        known = [n for n in (cap, left, context_room) if n is not None]
        return min(known)


def _room(what: str, left: int) -> None:
    """``ContextLengthExceeded`` when ``what`` leaves no token for a completion."""
    if left < 1:
        raise ContextLengthExceeded(
            f"no room for a completion: {what} leaves {left} tokens (not sent)"
        )


async def send_within(
    watch: TurnWatch,
    rng: Backoff,
    send: Callable[[int | None], Awaitable[Answer]],
    max_tokens: int | None,
    hint: Rejection | None = None,
) -> tuple[Answer, str | None]:
    """``send(max_tokens)`` with the retry policy; sent once more with the room a
    context-full refusal states when that is less than was asked (module docstring). The
    turn is kept in ``watch``, the policy's, which judges a turn that outran its time a
    long answer or a stall (:func:`~gymforge.rollout.liveness.turn_with_retries`)."""
    try:
        return await turn_with_retries(watch, rng, send, max_tokens, hint)
    except ContextLengthExceeded as err:
        left = room(str(err))
        if left is None or left < 1 or (max_tokens is not None and left >= max_tokens):
            raise
    # sent outside the handler: the resend's errors are not raised in the refusal's context
    # (whose chain would name the refusal as a cut connection's cause)
    return await turn_with_retries(watch, rng, send, left, hint)
