"""``WorldToolEnv``: a ``ToolEnv`` whose world is a SQLite database.

On top of ``ToolEnv`` it adds, for every world environment:

- reset from a cached per-task template (``gymforge.world.db``), with seeded ids and a
  simulated clock, and ``snapshot()`` as the canonical, normalised tables;
- the action log: one ``LogEvent`` per tool call (with the world layer's attributes:
  ``effect``, ``replay``, ``resubmit``, plus whatever the tool ``note``d), per reply
  (``agent.reply``) and per user event (``user.confirm``, ``user.reveal``), for the
  declarative process rules of ``gymforge.verify.rules``;
- an optional user simulator: a non-final reply gets the user's answer; the reply is final
  once the environment's ``user_stop`` condition holds or the user gives up;
- per-episode budgets (``episode_budget``) and shaped reward components (``shape``) that are
  added to the step's components next to the sparse ``task`` one;
- cached tool schemas (building JSON Schemas per reset would dominate reset time).

Subclasses declare ``schema``, ``templates`` and the ``ToolEnv`` parts. Their truth model
extends ``WorldTruth``: the seed rows in ``world`` (or override ``world_rows``) and the start
time in ``now``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, ClassVar, TypeVar, cast

from pydantic import BaseModel, ConfigDict, SkipValidation

from gymforge.core.env import Environment, StepResult
from gymforge.core.episode import Budget
from gymforge.core.errors import EpisodeStateError, NoOracle
from gymforge.core.policy import EpisodeContext, Policy
from gymforge.core.seeding import rng
from gymforge.core.tokens import TokenCounter
from gymforge.core.types import (
    JSON,
    Action,
    Message,
    Observation,
    Reply,
    State,
    Task,
    ToolCall,
)
from gymforge.kit.tool_env import ToolEnv
from gymforge.reward.process import RuleCredit
from gymforge.tasks.truth import PASSTHROUGH
from gymforge.tools.result import ToolResult
from gymforge.tools.toolset import Toolset
from gymforge.verify.rules import LogEvent
from gymforge.world.clock import IdGen, SimClock, epoch
from gymforge.world.db import Template, TemplateCache, WorldDB
from gymforge.world.schema import Schema
from gymforge.world.sim import UserSimulator, UserTurn
from gymforge.world.writes import NO_WORLD_FAULTS, WorldFaults, WriteGuard


class WorldTruth(BaseModel):
    """The part of a world task's hidden truth that ``WorldToolEnv`` reads: the seed rows,
    table by table, and the simulated start time (ISO 8601). Extend it with the domain's.

    The rows are passed through as they are, neither validated nor copied (on building,
    parsing or dumping): they are the bulk of a world task, the family generated them, and
    ``Template.build`` checks them against the environment's ``Schema`` anyway. Treat them as
    read-only; the episode's world is the database restored from them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    world: Annotated[dict[str, list[dict[str, JSON]]], SkipValidation, PASSTHROUGH]
    now: str


WorldTruthT = TypeVar("WorldTruthT", bound=WorldTruth)

_SCHEMAS: dict[tuple[type, tuple[str, ...]], tuple[dict[str, Any], ...]] = {}


class CachedToolset(Toolset):
    """A ``Toolset`` whose OpenAI schemas are built once per class and tool list."""

    @property
    def schemas(self) -> tuple[dict[str, Any], ...]:
        key = (type(self.owner), tuple(self.tools))
        found = _SCHEMAS.get(key)
        if found is None:
            found = _SCHEMAS[key] = tuple(t.schema for t in self.tools.values())
        return found


class WorldToolEnv(ToolEnv[WorldTruthT, WorldDB]):
    """Base class of the world environments. See the module docstring."""

    schema: ClassVar[Schema]
    templates: ClassVar[TemplateCache]

    def __init__(
        self,
        token_counter: TokenCounter | None = None,
        user_policy: Callable[[], Policy] | None = None,
    ) -> None:
        super().__init__(token_counter)
        self.toolset = CachedToolset(self)
        self.db = WorldDB()
        self.writes = WriteGuard()
        self.log: list[LogEvent] = []
        self.user: UserSimulator | None = None
        self.user_policy = user_policy
        self.budget = type(self).budget
        self._pending: UserTurn | None = None
        self._shaped: dict[str, float] = {}
        self._walk: tuple[list[Action], int] | None = None

    # ---- hooks ----------------------------------------------------------------------------
    def world_rows(self, task: Task) -> Mapping[str, Sequence[Mapping[str, Any]]]:
        """The task's seed rows, table by table."""
        return self.truth_of(task).world

    def world_key(self, task: Task) -> str:
        """What identifies the task's seed rows in ``templates``: the task id by default.
        Tasks that share one world (many questions over one corpus) return that world's key,
        so its template (and any full-text index in it) is built once for all of them."""
        return task.task_id

    def world_start(self, task: Task) -> int:
        """The simulated "now" at reset, as an epoch second."""
        return epoch(self.truth_of(task).now)

    def world_faults(self, task: Task) -> WorldFaults:
        return NO_WORLD_FAULTS

    def make_user(self, task: Task, r: random.Random) -> UserSimulator | None:
        """The user simulator of this episode, or None for a single-agent task."""
        return None

    def user_stop(self) -> str | None:
        """The environment's side of the stop condition (e.g. ``"resolved"``)."""
        return None

    def process_credit(self) -> RuleCredit | None:
        """Per-step process reward from rule checks (a fresh one per episode), or None."""
        return None

    def episode_budget(self, task: Task) -> Budget:
        return type(self).budget

    # ---- helpers for tools and verifiers -----------------------------------------------------
    def note(self, **attrs: Any) -> None:
        """Attach attributes to this step's action-log event (entity ids, flags)."""
        self.writes.attrs.update(attrs)

    def shape(self, component: str, value: float) -> None:
        """Add a shaped reward component to this step (logged apart from ``task``)."""
        self._shaped[component] = self._shaped.get(component, 0.0) + value

    def audit(self, action: str, entity_id: str, detail: str = "") -> str:
        """Append to the world's ``audit_log`` table; returns the (simulated) time."""
        at = self.db.tick()
        self.db.insert(
            "audit_log",
            {
                "id": self.db.new_id("AU"),
                "at": at,
                "actor": "agent",
                "action": action,
                "entity_id": entity_id,
                "detail": detail,
            },
        )
        return at

    # ---- ToolEnv ------------------------------------------------------------------------
    def init_world(self, task: Task, r: random.Random) -> WorldDB:
        key = f"{self.spec.id}@{self.spec.version}:{self.world_key(task)}"
        template = self.templates.get(
            key, lambda: Template.build(self.schema, self.world_rows(task))
        )
        tid, seed = task.task_id, self.seed
        self.db.load(
            template,
            IdGen(rng(tid, seed, "ids")),
            SimClock(self.world_start(task), rng(tid, seed, "clock")),
        )
        self.writes.reset(self.db, tid, seed, self.world_faults(task))
        self.log = []
        self.process = self.process_credit()
        self.user = self.make_user(task, rng(tid, seed, "user"))
        self.budget = self.episode_budget(task)
        self._pending, self._shaped = None, {}
        self._walk = None
        return self.db

    def state(self) -> State:
        out: State = {"world": self.db.snapshot()}
        if self.user is not None:
            out["user"] = self.user.state()
        return out

    async def reset(self, task_id: str, seed: int) -> Observation:
        obs = await super().reset(task_id, seed)
        if self.user is not None:
            await self.user.start(EpisodeContext(task_id, seed, cast(Environment, self)))
        return obs

    async def step(self, action: Action) -> StepResult:
        if self._done or self.task is None:
            return await super().step(action)  # raises EpisodeStateError
        self.writes.attrs = {}
        self._shaped, self._pending = {}, None
        if (
            isinstance(action, Reply)
            and self.user is not None
            and self._fits(action.text)
            and self.user_stop() is None
            and self.user.stop_reason is None
        ):
            self._pending = await self.user.respond(action.text)
        result = await super().step(action)
        if self.process is not None:
            for name, value in self.process(self.log).items():
                self.shape(name, value)
        if not self._shaped:
            return result
        components = dict(result.reward_components)
        for name, value in self._shaped.items():
            components[name] = components.get(name, 0.0) + value
        return StepResult.make(
            result.observation,
            components,
            terminated=result.terminated,
            truncated=result.truncated,
            info=result.info,
            timing=result.timing,
        )

    def on_reply(self, text: str) -> list[Message] | None:
        step = self.counters.steps
        self.log.append(LogEvent(step, "agent.reply", {}))
        turn, self._pending = self._pending, None
        if turn is None:
            return None
        for kind, attrs in turn.events:
            self.log.append(LogEvent(step, f"user.{kind}", attrs))
        if turn.stop is not None:
            return None
        return [Message(role="user", content=turn.text)]

    async def oracle_action(self) -> Action:
        """Walk ``oracle_plan`` like ``ToolEnv.oracle_action`` (a call that hit a fault or a
        retryable error is sent again), but keep answering with the plan's last action once
        the plan is used up: in a dialogue the episode can outlive the plan (an attack that
        skipped a step leaves the customer talking)."""
        if self.task is None:
            raise EpisodeStateError("oracle_action() before reset()")
        if self._walk is None:
            plan = self.oracle_plan(self.task)
            if not plan:
                raise NoOracle(self.no_oracle_reason(self.task))
            self._walk = (plan, 0)
        plan, i = self._walk
        last = self.toolset.last_result
        if (
            0 < i <= len(plan)
            and isinstance(plan[i - 1], ToolCall)
            and last is not None
            and (last.fault or (last.error is not None and last.error.retryable))
        ):
            i -= 1
        self._walk = (plan, min(i + 1, len(plan)))
        return plan[min(i, len(plan) - 1)]

    async def close(self) -> None:
        await super().close()
        self.db.close()

    # ---- internals ------------------------------------------------------------------------
    def _fits(self, text: str) -> bool:
        """Whether the reply stays inside the token budget (``ToolEnv.step`` cuts it off
        unexecuted otherwise, and the user must not have answered it)."""
        limit = self.budget.max_tokens
        return limit is None or self.counters.tokens + self.token_counter.count_text(text) <= limit

    def on_tool_result(self, call: ToolCall, result: ToolResult) -> None:
        """The call's action-log event, before anything can judge the step."""
        tool = self.toolset.tools.get(call.name)
        writes = bool(tool and tool.writes)
        attrs: dict[str, Any] = {"ok": result.ok, "writes": writes}
        if writes:
            attrs["keyed"] = bool(call.arguments.get("idempotency_key"))
        if result.error is not None:
            attrs["error"] = result.error.kind
        if result.fault:
            attrs["fault"] = result.fault
        attrs.update(self.writes.attrs)
        step = self.counters.steps
        self.log.append(LogEvent(step, f"tool.{call.name if tool else '?'}", attrs))
