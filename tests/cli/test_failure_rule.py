"""``gymforge.rollout.failures``: each kind of failure, its exit code, and whether the
runner retries it (only a retryable ``InfraError``)."""

from __future__ import annotations

import pytest

from gymforge.core.errors import InfraError, IntegrityError, NoOracle, UserError, VerifierError
from gymforge.rollout import failures
from gymforge.rollout.executors.base import Abandoned, ExecutorDown, Refused
from gymforge.rollout.executors.redis_entries import WorkerBug
from gymforge.rollout.server import PolicyRequestRejected

RULE: list[tuple[BaseException, failures.Kind, int]] = [
    (UserError("bad flag"), "mistake", 2),
    (NoOracle("no reference solution"), "mistake", 2),
    (FileNotFoundError(2, "No such file"), "mistake", 2),
    (PolicyRequestRejected("401 bad key", status=401), "mistake", 2),
    (Refused("a worker's report"), "mistake", 2),
    (InfraError("connection refused"), "transient", 3),
    (ExecutorDown("no workers"), "transient", 3),
    (Abandoned("its workers kept dying"), "transient", 3),
    (IntegrityError("digest chain broken"), "integrity", 1),
    (ValueError("an internal invariant"), "bug", 1),
    (WorkerBug("a Redis worker's episode raised"), "bug", 1),
]


@pytest.mark.parametrize(("error", "kind", "code"), RULE, ids=lambda x: type(x).__name__)
def test_the_rule_names_each_failure_and_its_exit_code(
    error: BaseException, kind: failures.Kind, code: int
) -> None:
    assert failures.kind_of(error) == kind
    assert failures.exit_code(kind) == code
    assert failures.retryable(error) == (kind == "transient" and error.__class__ is InfraError)


@pytest.mark.parametrize(
    ("error", "printed"),
    [
        (PolicyRequestRejected("401 bad key", status=401), "the policy's requests are refused: "),
        (UserError("bad flag"), "bad flag"),
        (Refused("worker: env x is not installed"), "worker: env x is not installed"),
        (VerifierError("the gold query failed"), "VerifierError: the gold query failed"),
        (NoOracle("no reference solution"), "no reference solution"),
    ],
    ids=lambda x: type(x).__name__,
)
def test_a_mistake_is_printed_as_what_it_is(error: BaseException, printed: str) -> None:
    """Only an attempt's request that cannot succeed (an ``InfraError`` not retried) is
    worded as a refusal: a verifier's error escaping a run was printed as "the policy's
    requests are refused"."""
    assert str(failures.as_mistake(error)).startswith(printed)
