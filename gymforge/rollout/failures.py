"""The one rule for failures: whether the same input would fail the same way again decides
what happens. The runner (retry or stop), the remote executors' workers (what they report)
and the CLI (the message and the exit code) all ask this module, so the rule lives here once.

- **A mistake**: the same input always hits it, so no retry can help (``UserError``: a bad
  id, flag, file or line; a policy that cannot play a task, like the oracle on a task without
  a reference solution or ``recorded:R`` without the episode; an ``InfraError`` marked not
  retryable, a server that refuses every request). Never retried: the run stops at once and
  the CLI prints one ``error:`` line naming the fix and exits ``USER_EXIT`` (2).
- **Transient**: a retry can fix it (a retryable ``InfraError``: a policy server down, a
  worker killed, an episode that stalled before the agent acted). Retried up to
  ``--max-retries`` times; an episode still unwritten is an infrastructure error, never
  scored, and the command exits ``INFRA_EXIT`` (3) advising ``--resume``, which runs just
  those. ``ExecutorDown`` (no workers, a lost cluster) ends the run at once, but is transient
  all the same: the finished episodes are kept, and ``--resume`` continues once it is back.
  ``Abandoned`` (a Redis task whose workers died each time they took it, past the reclaims
  allowed) is transient too, but its job is given up at once, never retried.
- **Integrity**: a trajectory file or document failed its digest chain, schema or seal
  (``IntegrityError``): ``INTEGRITY_EXIT`` (1).
- **A stop**: Ctrl-C, SIGTERM or SIGHUP: the finished episodes and ``summary.json`` are kept,
  the resume command is printed, and the exit code is ``128 + the signal number``
  (``stop_exit``: 130, 143, 129; ``gymforge.cli.stops``).
- Anything else is a bug (in gymforge or the environment): it keeps its traceback (exit 1).
  Raised inside an episode it stops the run, never retried, on every executor: a remote
  worker reports it with its traceback and serves on (``executors.redis_entries``).
"""

from __future__ import annotations

from typing import Literal

from gymforge.core.errors import GymforgeError, InfraError, IntegrityError, UserError

__all__ = [
    "INFRA_EXIT",
    "INTEGRITY_EXIT",
    "USER_EXIT",
    "Kind",
    "as_mistake",
    "exit_code",
    "kind_of",
    "policy_failure",
    "retryable",
    "stop_exit",
]

USER_EXIT = 2
"""A mistake: fix the command or its input (one ``error:`` line says how)."""
INTEGRITY_EXIT = 1
"""A failed integrity check (also the exit code of a bug's traceback)."""
INFRA_EXIT = 3
"""Infrastructure failures left episodes unwritten (or a sealed log is unfinished): running
the same command with ``--resume`` continues."""

Kind = Literal["mistake", "transient", "integrity", "bug"]


def kind_of(err: BaseException) -> Kind:
    """Which of the module docstring's kinds ``err`` is."""
    if isinstance(err, IntegrityError):
        return "integrity"
    if isinstance(err, InfraError):
        return "transient" if err.retryable or _run_ending(err) else "mistake"
    if isinstance(err, (UserError, FileNotFoundError, IsADirectoryError, PermissionError)):
        return "mistake"
    if isinstance(err, GymforgeError):  # gymforge's own errors are the user's to fix
        return "mistake"
    return "bug"


def _run_ending(err: InfraError) -> bool:
    """Not retryable, yet not the input's fault: the executor is gone (``ExecutorDown``), or
    gave an attempt up after its own re-plays (``Abandoned``)."""
    from gymforge.rollout.executors.base import Abandoned, ExecutorDown  # base imports this

    return isinstance(err, (ExecutorDown, Abandoned))


def _reported(err: InfraError) -> bool:
    from gymforge.rollout.executors.base import Refused

    return isinstance(err, Refused)


def retryable(err: BaseException) -> bool:
    """Whether an attempt that failed with ``err`` is worth another try (transient, and not
    the executor itself gone)."""
    return isinstance(err, InfraError) and err.retryable


def exit_code(kind: Kind) -> int:
    """The CLI's exit code for a failure of ``kind`` (a bug's is Python's, 1)."""
    return {"mistake": USER_EXIT, "transient": INFRA_EXIT, "integrity": INTEGRITY_EXIT}.get(kind, 1)


def stop_exit(signum: int) -> int:
    """The exit code of a run stopped by signal ``signum`` (the shell's convention)."""
    return 128 + int(signum)


def as_mistake(err: BaseException) -> UserError:
    """``err`` (a mistake, see ``kind_of``) as the ``UserError`` the CLI prints."""
    if isinstance(err, UserError):
        return err
    if isinstance(err, InfraError) and _reported(err):
        return UserError(str(err))  # a remote worker's report, already worded
    if isinstance(err, InfraError):  # not retryable, out of an attempt: its requests
        return UserError(f"the policy's requests are refused: {err}")
    return UserError(f"{type(err).__name__}: {err}")  # another of gymforge's own errors


def policy_failure(policy: str, what: str, err: Exception) -> GymforgeError:
    """What an exception a policy raised inside an episode becomes: a mistake (``UserError``)
    or an ``InfraError`` stays what it is; anything else is an ``InfraError`` (a policy's
    client failing is retried, never scored), worded ``policy NAME WHAT: Type: message``."""
    if isinstance(err, (UserError, InfraError)):
        return err
    return InfraError(f"policy {policy} {what}: {type(err).__name__}: {err}")


def worker_report(err: InfraError | UserError) -> tuple[str, bool]:
    """What a remote worker (Ray, Redis) sends back for an attempt that failed with ``err``:
    its message and whether it is retryable. The coordinator raises a retryable one as an
    ``InfraError`` and any other as ``Refused``, which stops the run as a mistake."""
    if retryable(err):
        return str(err), True
    return str(as_mistake(err)), False
