"""The hidden truth of a code task, one model per kind the judge knows (see
``gymforge.verify.code.judge``): ``calls`` (the procedural families), ``humaneval``,
``mbpp`` and ``stdio``. ``CodeTruth`` is their union, told apart by ``kind``.

The judge's own contract stays plain data (it runs in a separate process and grades
``gymforge grade`` lines too): it is handed ``Task.truth``, or ``dump_truth`` of a model
built here (``code-agent``'s visible tests).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, with_config
from typing_extensions import TypedDict  # pydantic validates typing's only from 3.12 on

from gymforge.verify.code.shared import MAX_CALL_TIMEOUT, MAX_TASK_TIMEOUT

_FROZEN = ConfigDict(frozen=True, extra="forbid")


@with_config(ConfigDict(extra="forbid"))
class CallTest(TypedDict):
    """One call of the entry point and the value it must return (plain data): a validated
    dict, not a model (tens per task, validated as dicts and written into ``Task.truth`` as
    they are); read-only like any other value of a truth."""

    args: list[Any]
    expected: Any


class StdioTest(BaseModel):
    """One program run: its standard input and the output it must print."""

    model_config = _FROZEN

    input: str
    output: str


class TaskLimits(BaseModel):
    """A dataset row's own time limits, seconds (``call_timeout``: per call, or per run of a
    stdio program; ``task_timeout``: the whole task). Ceilings: ``MAX_CALL_TIMEOUT``,
    ``MAX_TASK_TIMEOUT`` of ``gymforge.verify.code.shared``; the judge never goes below its
    own defaults."""

    model_config = _FROZEN

    call_timeout: float | None = Field(default=None, gt=0, le=MAX_CALL_TIMEOUT)
    task_timeout: float | None = Field(default=None, gt=0, le=MAX_TASK_TIMEOUT)


class CallsTruth(BaseModel):
    model_config = _FROZEN

    kind: Literal["calls"]
    entry_point: str
    tests: list[CallTest]
    reference: str | None = None


class HumanEvalTruth(BaseModel):
    model_config = _FROZEN

    kind: Literal["humaneval"]
    entry_point: str
    test: str
    prompt: str
    reference: str | None = None
    limits: TaskLimits | None = None


class MbppTruth(BaseModel):
    model_config = _FROZEN

    kind: Literal["mbpp"]
    test_list: list[str]
    test_setup_code: str
    test_imports: list[str]
    reference: str | None = None
    limits: TaskLimits | None = None


class StdioTruth(BaseModel):
    model_config = _FROZEN

    kind: Literal["stdio"]
    tests: list[StdioTest]
    language: str | None = None
    reference: str | None = None
    limits: TaskLimits | None = None


AnyCodeTruth = CallsTruth | HumanEvalTruth | MbppTruth | StdioTruth


class CodeTruth(RootModel[Annotated[AnyCodeTruth, Field(discriminator="kind")]]):
    """A code task's truth, whichever its kind (``root``)."""

    model_config = ConfigDict(frozen=True)

    @property
    def language(self) -> str:
        """The language the task is set in: a stdio task's own, else python."""
        own = self.root.language if isinstance(self.root, StdioTruth) else None
        return own or "python"

    @property
    def reference(self) -> str | None:
        """A reference solution, when the task has one (the oracle's answer)."""
        return self.root.reference
