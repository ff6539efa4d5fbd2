"""The error taxonomy. Who is at fault decides what happens next.

- ``PolicyError``: the model misbehaved (malformed output, bad tool call). It becomes an
  observation or a penalty; it never escapes ``step()``.
- ``ToolError``: a tool failed in a way the agent may see and recover from.
- ``VerifierError``: the checker itself broke. Once the agent has acted, the episode is a
  failure all the same, with reason ``verifier_error: <kind>`` (``trajectory.outcome``): a
  policy must not be able to take its failures out of the count by breaking the judge.
- ``InfraError``: infrastructure (server, worker, sandbox) failed. The episode is retried.
- ``UserError``: the human at the CLI asked for something impossible; printed on one line.
"""

from __future__ import annotations

from typing import Literal, get_args

ToolErrorKind = Literal[
    "invalid_arguments",
    "unknown_tool",
    "not_found",
    "permission_denied",
    "timeout",
    "conflict",
    "rate_limited",
    "validation",
    "internal",
]
TOOL_ERROR_KINDS: frozenset[str] = frozenset(get_args(ToolErrorKind))


class GymforgeError(Exception):
    """Base class of every error gymforge raises on purpose."""


class UserError(GymforgeError):
    """A usage mistake: bad id, bad path, bad config. The CLI prints it without a traceback."""


class ConfigError(UserError):
    """A configuration or dataset line is invalid."""


class UnknownTaskError(UserError):
    """A task id that no family or dataset can resolve."""


class NoOracle(UserError, NotImplementedError):
    """The oracle cannot play a task: the environment has no reference solution for it (a
    dataset row without one, say). The same task always hits it: a mistake, never retried."""


class PolicyError(GymforgeError):
    """The policy produced something unusable (a parse failure, an impossible call)."""


SERVED_STOP_REASONS = frozenset(
    {"abandoned", "session_closed", "idle_timeout", "request_timeout", "server_shutdown"}
)
"""The failure reasons of served episodes that ended because their client (the policy)
walked away or its session ended (``gymforge.serve.record.END_REASONS``)."""

EPISODE_TIMEOUT = "episode_timeout"
"""The failure reason of an episode that ran past its ``--episode-timeout`` after the agent
acted, or before it while its policy's server was seen generating (a long first turn,
``policy.StallJudgingPolicy``): its time budget is spent by the agent's actions and turns,
so it is the episode's counted failure, not an infrastructure error
(``rollout.episode.run_episode``)."""

TURN_TIMEOUT = "turn_timeout"
"""The failure reason of an episode whose model turn ran past the policy's call timeout on
every attempt after the agent acted, or before it while the server was seen answering
(:class:`TurnTimedOut`): the turn's length is the policy's output, so, as
``EPISODE_TIMEOUT``, it is the episode's counted failure."""

TRANSCRIPT_REFUSED = "transcript_refused"
"""The failure reason of an episode whose policy's own server refused a request for what it
holds after the agent acted (a moderation or content-policy refusal, a guardrail: any 4xx
not retried and not a full context) while it answers the episode's first prompt, none of the
agent's text, or refused the first turn twice while it answers its prompt for one token
(the answer the agent generates refused) (:class:`TranscriptRefused`): the transcript is
the policy's output, so, as ``context_length``, the episode's counted failure."""

TRANSCRIPT_FAILED = "transcript_failed"
"""The failure reason of an episode whose policy's own server failed a turn on every
attempt (a 5xx, a cut connection, a bad answer) while it answers the episode's first
prompt, none of the agent's text, for one token, and fails the turn again when it is asked
once more (:class:`TranscriptFailed`): a server that fails only on what the agent wrote or,
on the first turn, on the answer it generates; both are the policy's output, so, as
``TRANSCRIPT_REFUSED``, the episode's counted failure."""

WORKER_DIED_ON_ACTION = "worker_died_on_action"
"""The failure reason of a Redis task whose workers died each time they took it, every one
after the agent's first action reached the environment, while the job's reset (none of the
agent's actions) is played without dying (:class:`WorkerDiedOnAction`): an environment that
ends the process on what the agent did, as one that raises on it, is the agent's outcome,
counted (``gymforge.rollout.executors.redis_deaths``)."""

POLICY_STOP_REASONS = (
    frozenset(
        {
            "context_length",
            "harness_exited",
            "harness_timeout",
            "harness_crashed",
            EPISODE_TIMEOUT,
            TURN_TIMEOUT,
            TRANSCRIPT_REFUSED,
            TRANSCRIPT_FAILED,
            WORKER_DIED_ON_ACTION,
        }
    )
    | SERVED_STOP_REASONS
)
"""The failure reasons of episodes the policy ended before the environment did
(:class:`PolicyStopped`, a served client's ``SERVED_STOP_REASONS``, a time budget the agent
spent: ``EPISODE_TIMEOUT``, ``TURN_TIMEOUT``; a transcript its server refused to read or
failed on: ``TRANSCRIPT_REFUSED``, ``TRANSCRIPT_FAILED``): truncated, with no terminal
step."""


class PolicyStopped(PolicyError):
    """The policy cannot go on with an episode the environment has not ended. A budget end,
    not an infrastructure failure: the runner ends the episode as truncated, with
    ``reason`` (one of :data:`POLICY_STOP_REASONS`) as its failure reason."""

    reason = "context_length"

    def __reduce__(self) -> tuple[object, ...]:  # picklable with its attributes (Ray)
        return (type(self), (str(self),), self.__dict__)


class HarnessExited(PolicyStopped):
    """An outside harness returned or exited, and the environment asked for more."""

    reason = "harness_exited"


class HarnessCrashed(PolicyStopped):
    """An outside harness raised or exited non-zero after it had acted (a model turn or a
    step) and with its inference server answering: the policy's counted failure, never an
    infrastructure error, or a policy could turn its failures into unscored retries by
    making its harness fall over."""

    reason = "harness_crashed"


class HarnessTimedOut(PolicyStopped):
    """An outside harness ran past its wall-clock limit without a final message."""

    reason = "harness_timeout"


class TranscriptRefused(PolicyStopped):
    """The policy's server refused a request for the agent's text in it (on the first turn,
    for the answer it generates: refused twice), and answers the episode's first prompt
    (``TRANSCRIPT_REFUSED``): the policy's counted failure, never the
    configuration mistake that stops the run (``gymforge.rollout.transcript_refusal``)."""

    reason = TRANSCRIPT_REFUSED


class TranscriptFailed(PolicyStopped):
    """The policy's server failed a turn on every attempt, answers the episode's first
    prompt for one token, and failed the turn again when asked once more
    (``TRANSCRIPT_FAILED``): the policy's counted failure, never an infrastructure error
    retried and left unwritten (``gymforge.rollout.transcript_refusal``)."""

    reason = TRANSCRIPT_FAILED


class WorkerDiedOnAction(PolicyStopped):
    """The workers playing a Redis task died each time after the agent acted, and its reset
    was played without dying (``WORKER_DIED_ON_ACTION``): the agent's counted failure,
    never a task given up as infrastructure (``gymforge.rollout.executors.redis_deaths``)."""

    reason = WORKER_DIED_ON_ACTION


class ContextLengthExceeded(PolicyStopped):
    """The conversation no longer fits the policy's context window (``context_length``)."""

    def __init__(self, message: str, *, prompt_tokens: int | None = None) -> None:
        super().__init__(message)
        self.prompt_tokens = prompt_tokens

    def __reduce__(self) -> tuple[object, ...]:  # picklable with its attributes (Ray)
        return (type(self), (str(self),), self.__dict__)


class ToolError(GymforgeError):
    """A structured, recoverable tool failure shown to the agent as an error result."""

    def __init__(self, kind: ToolErrorKind, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.kind: ToolErrorKind = kind
        self.message = message
        self.retryable = retryable


class VerifierError(GymforgeError):
    """The verifier could not reach a verdict (crash, timeout). After the agent acted, a
    failed episode that counts (``trajectory.outcome``); see the module docstring."""


class InfraError(GymforgeError):
    """Infrastructure failed (server down, worker killed). The episode should be retried,
    unless ``retryable`` is False (a refused request): then the run stops."""

    retryable = True


class TurnTimedOut(InfraError):
    """Every attempt at a model turn ran past the policy's call timeout (no answer at all,
    never an error status). The runner ends the episode as truncated with ``TURN_TIMEOUT``,
    a counted failure, once the agent acted, and before it when ``answering`` (the server
    was seen answering while the turn waited, so the turn's own length outran the timeout):
    a turn's length is the policy's own output, and a policy must not turn the episodes it
    fails into unscored retries by answering at length. Before the agent acted and without
    ``answering`` it is infrastructure (a stalled start, retried)
    (``rollout.episode.run_episode``)."""

    answering: bool = False
    """The server was seen generating while this turn waited (other turns answered during
    each attempt, or the same request for one token): a long answer, not a stalled server.
    Set by the policy that raises it."""


class EpisodeStateError(GymforgeError):
    """The contract was used out of order: ``step()`` before ``reset()`` or after the end."""


class IntegrityError(GymforgeError):
    """A trajectory file failed its digest chain or schema: it was edited or truncated."""
