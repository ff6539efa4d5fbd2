"""The hidden truth of a ``swe`` task: the repository template, the tracker, the files the
agent may not change, the reference fix (the oracle's), and how the final workspace is judged.

Two judging modes:

- ``checks`` (generated repositories): plain-data calls ``target(*args, **kwargs)`` whose
  return values the judge compares with ``expected``; run through the code judge's call path,
  so expected values never enter a process the agent's code controls.
- ``command`` (user task files whose hidden tests are a test command): after ``submit``, in a
  fresh sandbox job, the judge's own copies of the protected files and hidden test files over
  the agent's files, the command's exit status decides. Weaker (the agent's code runs in the
  same process as the tests), and every verdict says so.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

_FROZEN = ConfigDict(frozen=True, extra="forbid")

ABSENT = "@absent:"
"""``Check.target`` prefix: ``@absent:pkg.mod:name`` returns True when ``name`` is gone."""


class Comment(BaseModel):
    model_config = _FROZEN

    author: str
    body: str


class Issue(BaseModel):
    model_config = _FROZEN

    number: int
    title: str
    body: str
    labels: list[str] = Field(default_factory=list)
    state: Literal["open", "closed"] = "open"
    author: str = "reporter"
    comments: list[Comment] = Field(default_factory=list)


class Check(BaseModel):
    """One hidden test: ``target`` is ``package.module:function`` (or ``@absent:...``)."""

    model_config = _FROZEN

    name: str
    target: str
    args: list[Any] = Field(default_factory=list)
    kwargs: dict[str, Any] = Field(default_factory=dict)
    expected: Any = None


class FixStep(BaseModel):
    """One step of the reference fix, as the editor tools take it."""

    model_config = _FROZEN

    op: Literal["edit", "create", "delete"]
    path: str
    old: str = ""
    new: str = ""


class SweTruth(BaseModel):
    model_config = _FROZEN

    files: dict[str, str]
    issues: list[Issue]
    target_issue: int
    protected: list[str]
    fix: list[FixStep]
    mode: Literal["checks", "command"] = "checks"
    checks: list[Check] = Field(default_factory=list)
    visible_command: str = ""  # command mode: run_tests runs this; checks mode: the runner
    hidden_command: str = ""
    hidden_files: dict[str, str] = Field(default_factory=dict)
