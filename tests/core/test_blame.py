"""``core.blame``: a failure on the agent's text is the agent's only when the same model
answers without it; a probe failing as text could make it is the configuration's mistake;
the probe's own server failure is raised as it is."""

from __future__ import annotations

import asyncio

import pytest

from gymforge.core.blame import (
    REFUSED,
    TIMED_OUT,
    blame_failure,
    blame_text,
    server_fault,
    text_fault,
)
from gymforge.core.errors import ContextLengthExceeded, InfraError, TurnTimedOut


class Refused(InfraError):
    retryable = False


class Configuration(InfraError):
    retryable = False


def configuration(failure: InfraError) -> InfraError:
    return Configuration(f"configuration: {failure}")


def blame(probe_error: Exception | None) -> None:
    async def without_text() -> None:
        if probe_error is not None:
            raise probe_error

    asyncio.run(blame_text(Refused("moderation"), without_text, configuration))


def test_the_kinds_of_failure_text_may_cause() -> None:
    assert text_fault(Refused("no")) == REFUSED
    assert text_fault(TurnTimedOut("slow")) == TIMED_OUT
    assert text_fault(InfraError("503")) is None


def test_an_answered_probe_blames_the_text() -> None:
    blame(None)  # returns: the agent's text caused the failure


@pytest.mark.parametrize(
    "probe_error", [Refused("again"), TurnTimedOut("stalled"), ContextLengthExceeded("full")]
)
def test_a_probe_failing_as_text_could_make_it_blames_the_configuration(
    probe_error: Exception,
) -> None:
    with pytest.raises(Configuration, match="configuration: moderation"):
        blame(probe_error)


def test_the_probes_own_server_failure_is_raised_as_it_is() -> None:
    with pytest.raises(InfraError, match=r"^503$") as info:
        blame(InfraError("503"))
    assert info.value.retryable


class Failed(InfraError):
    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def test_the_server_failures_text_may_cause() -> None:
    assert server_fault(Failed("500", 500)) and server_fault(Failed("reset"))
    assert not server_fault(Failed("429", 429))  # load, not the text
    assert not server_fault(TurnTimedOut("slow"))  # a stall: text_fault's
    assert not server_fault(Refused("no"))


@pytest.mark.parametrize(
    "probe_error",
    [
        None,
        Failed("503", 503),
        Refused("blocked"),
        TurnTimedOut("slow"),
        ContextLengthExceeded("full"),
    ],
)
def test_a_failure_is_raised_as_it_was_unless_the_probe_is_answered(
    probe_error: Exception | None,
) -> None:
    failure = Failed("500 on the transcript", 500)

    async def without_text() -> None:
        if probe_error is not None:
            raise probe_error

    if probe_error is None:
        asyncio.run(blame_failure(failure, without_text))
        return
    with pytest.raises(Failed) as raised:
        asyncio.run(blame_failure(failure, without_text))
    assert raised.value is failure and raised.value.__cause__ is probe_error
