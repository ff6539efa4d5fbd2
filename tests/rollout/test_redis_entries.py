"""A Redis worker's failure reports, read back by the coordinator: each kind of the one rule
(``gymforge.rollout.failures``) is raised as the local executor would have raised it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from gymforge.core.errors import (
    InfraError,
    IntegrityError,
    UserError,
    VerifierError,
)
from gymforge.rollout.executors.base import Abandoned, ExecutorDown, Refused
from gymforge.rollout.executors.redis_entries import (
    TRACEBACK_CHARS,
    WorkerBug,
    abandoned_fields,
    failure_fields,
    remote_failure,
    result_head,
    task_fields,
)
from gymforge.rollout.failures import kind_of
from gymforge.rollout.jobs import expand


def head() -> dict[str, str]:
    [job] = expand([("t/1", 4)], 1)
    fields = task_fields(
        job, 2, env_ref="ledger", policy_spec="oracle", run_id="r", result_stream="s"
    )
    return result_head(fields)


def raised(err: Exception) -> Exception:
    """``err`` raised (so it has a traceback), reported by a worker, read back."""
    try:
        raise err
    except Exception as caught:
        return remote_failure(failure_fields(caught, head()))


def test_each_kind_is_raised_as_the_local_executor_raises_it() -> None:
    transient = raised(InfraError("server down"))
    assert type(transient) is InfraError and transient.retryable
    assert isinstance(raised(UserError("no oracle")), Refused)
    refused = InfraError("refused")
    refused.retryable = False
    assert isinstance(raised(refused), Refused)
    # a gymforge error that left the episode is a mistake locally: the run stops, no retry
    verifier = raised(VerifierError("cannot judge"))
    assert isinstance(verifier, Refused) and "VerifierError: cannot judge" in str(verifier)
    assert isinstance(raised(IntegrityError("bad seal")), IntegrityError)


def test_a_bug_carries_its_traceback_and_stays_a_bug() -> None:
    bug = raised(KeyError("missing"))
    assert isinstance(bug, WorkerBug) and kind_of(bug) == "bug"  # the CLI keeps a traceback
    text = str(bug)
    assert text.startswith("KeyError: 'missing' (t/1 seed 4 rollout 0, attempt 2, worker ")
    assert "Traceback (most recent call last)" in text and "raise err" in text


def test_a_long_traceback_is_cut_to_its_end() -> None:
    report = failure_fields(ValueError("x" * (3 * TRACEBACK_CHARS)), head())
    assert len(report["traceback"]) == TRACEBACK_CHARS
    assert report["traceback"].endswith("x\n")


def test_an_abandoned_task_is_given_up_not_a_mistake() -> None:
    err = remote_failure(abandoned_fields(head(), 4, 2))
    assert isinstance(err, Abandoned) and not err.retryable
    assert kind_of(err) == "transient"  # --resume plays it again; never the input's fault
    assert "died 3 times" in str(err) and "at most 2 reclaims" in str(err)
    assert kind_of(ExecutorDown("gone")) == "transient"


@pytest.mark.parametrize("retryable", ["1", "0"])
def test_an_entry_without_a_kind_is_read_from_retryable(retryable: str) -> None:
    err = remote_failure({**head(), "error": "old worker", "retryable": retryable})
    assert isinstance(err, InfraError)
    assert isinstance(err, Refused) == (retryable == "0")


BROKEN_ENV = '''
from gymforge.core.errors import VerifierError
from gymforge.envs.ledger import LedgerEnv


class Broken(LedgerEnv):
    """The ledger, broken where WHERE says: its constructor, its reset or its step."""

    def __init__(self, *args, **kwargs):
        if WHERE == "init":
            raise RuntimeError("broken constructor")
        super().__init__(*args, **kwargs)

    async def reset(self, task_id, seed):
        if WHERE == "reset":
            raise VerifierError("this task cannot be judged")
        return await super().reset(task_id, seed)

    async def step(self, action):
        if WHERE == "step":
            raise ZeroDivisionError("broken step")
        return await super().step(action)
'''


@pytest.mark.parametrize(
    ("where", "kind", "error"),
    [
        ("init", "bug", "RuntimeError: broken constructor"),
        ("step", "bug", "ZeroDivisionError: broken step"),
        ("reset", "mistake", "VerifierError: this task cannot be judged"),
    ],
)
def test_a_worker_reports_what_the_jobs_code_raised(
    tmp_path: Path, where: str, kind: str, error: str
) -> None:
    """``run_task`` returns the failure of whatever the attempt's code raised (before, an
    exception not gymforge's own left it and ended the worker)."""
    from gymforge.envs.ledger import LedgerEnv
    from gymforge.rollout.executors.redis_worker import run_task

    source = tmp_path / f"broken_{where}.py"
    source.write_text(f"WHERE = {where!r}\n" + BROKEN_ENV)
    [job] = expand([(LedgerEnv.tasks.sample(1, 0)[0], 0)], 1)
    fields = task_fields(
        job, 0, env_ref=f"{source}:Broken", policy_spec="oracle", run_id="r", result_stream="s"
    )
    report = asyncio.run(run_task(fields))
    assert report["kind"] == kind and report["error"] == error, report
    assert report["retryable"] == "0" and "records" not in report
    assert ("traceback" in report) == (kind == "bug")
