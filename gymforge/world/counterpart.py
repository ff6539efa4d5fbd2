"""A model on the other side of the agent's conversation, and what its failures mean.

:class:`Counterpart` puts any ``Policy`` (an LLM behind an OpenAI-compatible server, say) in
the place of a simulated customer (``world.sim.PolicyUser``) or requester
(``envs.crm.requester.PolicyRequester``): it sends the counterpart's instructions as a
system message before the agent's first message, then each agent message as a user
message, and reads the answer's text.

What that model reads is the agent's text, so a failure the agent's text causes is the
agent's outcome: the counterpart hangs up (:class:`Heard` with a ``stop`` reason) and the
episode is judged as any other, never an exception out of ``env.step``, which would end the
whole run (a refusal: not retryable) or leave the episode unscored (retried):

- ``context_length``: the model's context is full (``PolicyStopped``), of the agent's text;
- ``refused``: the server refused the request (a 4xx that is not retried: a moderation or
  content-policy refusal, OpenAI's ``content_policy_violation``, Azure's ``content_filter``,
  a gateway's guardrail, in whatever wording);
- ``timed_out``: every attempt ran past the call timeout (``TurnTimedOut``): the agent's
  text asked for more than the model can say in time.

The last two are the agent's only when the same model, asked without any of the agent's
text (its instructions and :data:`PROBE`, as before the agent said anything), answers:
the probe restarts the policy and sends that alone (:func:`gymforge.core.blame.blame_text`,
the rule the policy's own server is judged by too). A stall its policy already saw the
server answer through (``TurnTimedOut.answering``, ``gymforge.rollout.liveness``) needs no
probe, nor does a refusal a server policy judged itself after the counterpart's first
answer (``TranscriptRefused``: its first request, the instructions and the agent's first
message, answered; ``gymforge.rollout.transcript_refusal``). When the probe is refused or
times out too, the configuration or the server is at fault (a wrong model name, a bad key,
instructions the moderation refuses, a server that stalls): a refusal stops the run
(:class:`CounterpartRefused`, with the server's message) and a stall is raised as it was
(retried).
A server failure (a 5xx, a dropped connection, after the policy's retries) can be the
agent's text's doing too (``core.blame.server_fault``: a server that fails on that text
only), and retried it would leave the episode unwritten: the agent's text is asked once
more (the policy is left as it was by a failed turn), and a server failure of that too is
probed the same way (:func:`gymforge.core.blame.blame_failure`): answered, the counterpart
hangs up (``failed``); failed in any way, the failure is raised as it was (retried). A
server policy that judged it itself after the counterpart's first answer
(``TranscriptFailed``, ``gymforge.rollout.transcript_refusal``) hangs up ``failed`` too. A
429 is load, never the agent's: raised, and the episode retried.
"""

from __future__ import annotations

from dataclasses import dataclass

from gymforge.core.blame import (
    FAILED,
    REFUSED,
    TIMED_OUT,
    blame_failure,
    blame_text,
    server_fault,
    text_fault,
)
from gymforge.core.errors import (
    InfraError,
    PolicyStopped,
    TranscriptFailed,
    TranscriptRefused,
    TurnTimedOut,
)
from gymforge.core.policy import EpisodeContext, Policy, PolicyTurn
from gymforge.core.types import Message, Observation, Reply

__all__ = [
    "FAILED",
    "PROBE",
    "REFUSED",
    "TIMED_OUT",
    "Counterpart",
    "CounterpartRefused",
    "Heard",
]

PROBE = "Hello."
"""The probe's user message: nothing of the agent's."""


@dataclass(frozen=True)
class Heard:
    """The counterpart's answer (``""`` for one that is not a ``Reply``), or why it hung up
    (``stop``; ``text`` is then empty)."""

    text: str
    stop: str | None = None


class Counterpart:
    """``policy`` answering the agent, with ``instructions`` as its system message (see the
    module docstring)."""

    def __init__(self, policy: Policy, instructions: str) -> None:
        self.policy, self.instructions = policy, instructions
        self.ctx = EpisodeContext("", 0)
        self.instructed = False
        self.stop: str | None = None
        """Why it hung up: every later message gets the same ``Heard``, unasked."""

    async def start(self, ctx: EpisodeContext) -> None:
        self.ctx, self.instructed, self.stop = ctx, False, None
        await self.policy.start(ctx)

    async def hear(self, text: str) -> Heard:
        """The model's answer to the agent's ``text``, or the reason it hangs up."""
        if self.stop is None:
            heard = await self._ask(text)
            self.stop = heard.stop
            return heard
        return Heard("", self.stop)

    async def _ask(self, text: str) -> Heard:
        msgs = [Message(role="user", content=text)]
        if not self.instructed:
            msgs.insert(0, Message(role="system", content=self.instructions))
        return await self._turn(Observation(messages=tuple(msgs)))

    async def _turn(self, observation: Observation, again: bool = False) -> Heard:
        """The model's answer to ``observation`` (``again``: asked once more after a server
        failure), or why it hangs up (module docstring)."""
        try:
            turn = await self.policy.act(observation)
        except TranscriptRefused:  # a server policy's own probe: its first request answered
            return Heard("", REFUSED)
        except TranscriptFailed:  # the same, for a server failure asked twice
            return Heard("", FAILED)
        except PolicyStopped as stop:  # its context is full (``context_length``)
            return Heard("", stop.reason)
        except InfraError as err:
            reason = text_fault(err)  # may be the agent's (the probe confirms), or None
            if reason is None:
                if not server_fault(err):
                    raise
                if not again:  # a failed turn leaves the policy as it was
                    return await self._turn(observation, again=True)
                await blame_failure(err, self._without_text)
                return Heard("", FAILED)
            if not (isinstance(err, TurnTimedOut) and err.answering):
                await self.probe(err)  # the server's answering is not known yet
            return Heard("", reason)
        return self._heard(turn)

    def _heard(self, turn: PolicyTurn) -> Heard:
        self.instructed = True
        return Heard(turn.action.text if isinstance(turn.action, Reply) else "")

    async def probe(self, failure: InfraError) -> None:
        """Return when the model answers its instructions and :data:`PROBE` alone (the
        agent's text caused ``failure``); else raise ``failure`` (the configuration or the
        server did), or the probe's own server failure (retried)."""
        await blame_text(failure, self._without_text, _configuration)

    async def _without_text(self) -> None:
        """The model asked its instructions and :data:`PROBE` alone, restarted for it."""
        first = (
            Message(role="system", content=self.instructions),
            Message(role="user", content=PROBE),
        )
        await self.policy.start(self.ctx)
        await self.policy.act(Observation(messages=first))


class CounterpartRefused(InfraError):
    """The counterpart's model refuses a request with none of the agent's text in it too:
    its configuration is wrong (model name, key, instructions). Not retryable: the run
    stops with this message."""

    retryable = False


def _configuration(failure: InfraError) -> InfraError:
    """``failure`` as it is when it is retryable (a stall: the server's, retried), else
    worded as the configuration's mistake it is (:class:`CounterpartRefused`)."""
    if failure.retryable:
        return failure
    return CounterpartRefused(
        "the user_policy model (the simulated user or requester) refuses a request without "
        "the agent's text too (its instructions and a greeting): check its model name, key "
        f"and instructions: {failure}"
    )
