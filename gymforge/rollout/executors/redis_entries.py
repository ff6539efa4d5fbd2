"""The entries of the Redis backend's streams (``redis_worker`` has the layout): a task
entry (``task_fields``), and a result entry, which carries an attempt's records or its
failure; and how the coordinator raises that failure (``remote_failure``).

A failed attempt is judged on the worker by the one rule (``gymforge.rollout.failures``)
and raised by the coordinator as the local executor would have raised it, so a job fails
the same way on every backend. The result's ``kind`` says which:

- ``transient`` (a retryable ``InfraError``): ``InfraError``, retried by the runner.
- ``mistake`` (a ``UserError``, a refused request, any other gymforge error that left the
  episode): ``Refused``, which stops the run as a ``UserError``.
- ``integrity``: ``IntegrityError``.
- ``bug`` (any other exception the job's own code raised: the environment, its verifier, the
  policy's code): ``WorkerBug``, carrying the worker's traceback. As on the local executor
  the run stops with it (a traceback, exit 1), and the job is never played again: the
  worker acks its entry, so no other worker reclaims it, and serves on.
- ``abandoned``: the workers that took the entry died (a killed process, a lost connection)
  more often than the reclaims a job is allowed (``MAX_RECLAIMS``): ``Abandoned``, which the
  runner gives up at once, as an infrastructure error, never queued again.

Older entries without ``kind`` are read from ``retryable``.
"""

from __future__ import annotations

import json
import os
import socket
import traceback
from typing import Any

from gymforge.core.errors import InfraError, IntegrityError, UserError
from gymforge.rollout.executors.base import Abandoned, Refused
from gymforge.rollout.failures import kind_of, worker_report
from gymforge.rollout.jobs import Job

__all__ = [
    "MAX_RECLAIMS",
    "TRACEBACK_CHARS",
    "WorkerBug",
    "abandoned_fields",
    "failure_fields",
    "job_key",
    "remote_failure",
    "result_head",
    "task_fields",
]

MAX_RECLAIMS = 2
"""Times one task entry may be taken over from a worker that died with it: the next worker to
take it gives it up (``abandoned``) rather than play it, so a job that kills every worker
(one that exhausts memory, or calls ``os._exit``) costs at most ``MAX_RECLAIMS + 1`` workers."""

TRACEBACK_CHARS = 8000
"""The most of a worker's traceback a ``bug`` result carries (its last characters)."""


class WorkerBug(RuntimeError):
    """An exception that is not gymforge's own, raised by a job's code on a Redis worker: a
    bug (``failures.kind_of``), which stops the run with the worker's traceback in its
    message, as the same exception stops a run on the local executor."""


def job_key(fields: dict[str, Any]) -> tuple[str, int, int]:
    return (fields["task_id"], int(fields["seed"]), int(fields["rollout"]))


def task_fields(
    job: Job,
    attempt: int,
    *,
    env_ref: str,
    policy_spec: str,
    run_id: str,
    result_stream: str,
    dataset: str | None = None,
    policy_options: dict[str, Any] | None = None,
    episode_timeout_s: float | None = None,
) -> dict[str, str]:
    """The task entry of one attempt at ``job``. ``policy_options`` (sampling and token-in
    settings, ``base_url`` among them) are plain JSON scalars."""
    fields = {
        "run_id": run_id,
        "env": env_ref,
        "policy": policy_spec,
        "task_id": job.task_id,
        "seed": str(job.seed),
        "rollout": str(job.rollout),
        "index": str(job.index),
        "attempt": str(attempt),
        "result_stream": result_stream,
    }
    if dataset:
        fields["dataset"] = dataset
    options = dict(policy_options or {})
    base_url = options.pop("base_url", None)
    if base_url:
        fields["base_url"] = base_url
    if options:
        fields["policy_options"] = json.dumps(options, sort_keys=True)
    if episode_timeout_s is not None:
        fields["episode_timeout_s"] = repr(float(episode_timeout_s))
    return fields


def result_head(fields: dict[str, Any]) -> dict[str, str]:
    """The fields every result entry of the task entry ``fields`` starts with: the attempt
    it answers and the worker (host and pid) that answers."""
    return {
        "run_id": fields["run_id"],
        "task_id": fields["task_id"],
        "seed": str(int(fields["seed"])),
        "rollout": str(int(fields["rollout"])),
        "index": str(int(fields["index"])),
        "attempt": str(fields.get("attempt", "0")),
        "worker": f"{socket.gethostname()}:{os.getpid()}",
    }


def failure_fields(err: Exception, head: dict[str, str]) -> dict[str, str]:
    """The result entry of an attempt whose own code raised ``err`` (see the module
    docstring for the kinds); a bug's carries the end of its traceback."""
    kind = kind_of(err)
    if isinstance(err, (InfraError, UserError)) and kind in ("transient", "mistake"):
        message, _again = worker_report(err)
    else:
        message = f"{type(err).__name__}: {err}"
    out = {**head, "error": message, "kind": kind, "retryable": "1" if kind == "transient" else "0"}
    if kind == "bug":
        text = "".join(traceback.format_exception(err))
        out["traceback"] = text[-TRACEBACK_CHARS:]
    return out


def abandoned_fields(head: dict[str, str], deliveries: int, max_reclaims: int) -> dict[str, str]:
    """The result entry of a task entry given up after ``deliveries`` workers took it and
    none answered (the last of them having died with it)."""
    message = (
        f"the workers playing it died {deliveries - 1} times (each took it over from the last; "
        f"at most {max_reclaims} reclaims); given up, not played again"
    )
    return {**head, "error": message, "kind": "abandoned", "retryable": "0"}


def remote_failure(fields: dict[str, Any]) -> Exception:
    """The exception a failed result entry raises on the coordinator (module docstring)."""
    error = str(fields["error"])
    kind = fields.get("kind") or ("transient" if fields.get("retryable") == "1" else "mistake")
    if kind == "transient":
        return InfraError(error)
    if kind == "abandoned":
        return Abandoned(error)
    if kind == "integrity":
        return IntegrityError(error)
    if kind == "bug":
        task, seed, rollout = job_key(fields)
        where = (
            f"{task} seed {seed} rollout {rollout}, attempt {fields.get('attempt', '0')}, "
            f"worker {fields.get('worker', '?')}"
        )
        tail = fields.get("traceback") or ""
        return WorkerBug(f"{error} ({where}); the worker's traceback:\n{tail}".rstrip())
    return Refused(error)
