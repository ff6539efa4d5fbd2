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
- per-episode budgets (``episode_budget``) and per-step process credit (``process_credit``,
  through ``ToolEnv``'s ``extra_reward`` hook), added next to the sparse ``task`` component
  like the components tools ``shape``;
- cached tool schemas (building JSON Schemas per reset would dominate reset time).

Like every ``ToolEnv``, it extends the base through hooks (``on_reset`` starts the user
simulator, ``on_reply`` asks it, ``extra_reward`` pays process credit), never by overriding
``reset`` or ``step``; its subclasses do the same.

Subclasses declare ``schema``, ``templates`` and the ``ToolEnv`` parts. Their truth model
extends ``WorldTruth``: the seed rows in ``world`` (or override ``world_rows``) and the start
time in ``now``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, SkipValidation

from gymforge.core.episode import Budget
from gymforge.core.policy import Policy, episode_context
from gymforge.core.seeding import rng
from gymforge.core.tokens import TokenCounter
from gymforge.core.types import JSON, Message, State, Task, ToolCall
from gymforge.kit.tool_env import ToolEnv
from gymforge.reward.process import RuleCredit
from gymforge.tasks.truth_dump import PASSTHROUGH
from gymforge.tools.result import ToolResult
from gymforge.tools.toolset import Toolset
from gymforge.verify.rules import LogEvent
from gymforge.world.clock import IdGen, SimClock, epoch
from gymforge.world.db import Template, TemplateCache, WorldDB
from gymforge.world.schema import Schema
from gymforge.world.sim import UserSimulator, UserTurn
from gymforge.world.writes import MAX_TEXT, NO_WORLD_FAULTS, WorldFaults, WriteGuard


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
    max_write_text: ClassVar[int] = MAX_TEXT
    """The longest text a write tool's argument may hold, at any depth (a record's field)."""

    def __init__(
        self,
        token_counter: TokenCounter | None = None,
        user_policy: Callable[[], Policy] | None = None,
    ) -> None:
        super().__init__(token_counter)
        self.toolset = CachedToolset(self)
        self.db = WorldDB()
        self.writes = WriteGuard(self.max_write_text)
        self.log: list[LogEvent] = []
        self.user: UserSimulator | None = None
        self.user_policy = user_policy
        self.budget = type(self).budget

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
        return self.db

    def state(self) -> State:
        out: State = {"world": self.db.snapshot()}
        if self.user is not None:
            out["user"] = self.user.state()
        return out

    async def on_reset(self, task: Task) -> None:
        if self.user is not None:
            await self.user.start(episode_context(self.user, self, task.task_id, self.seed))

    def extra_reward(self) -> dict[str, float]:
        """This step's process credit (``process_credit``), if the environment gives any."""
        return self.process(self.log) if self.process is not None else {}

    async def on_reply(self, text: str) -> list[Message] | None:
        """The user's answer to a non-final reply, or None to verify: the reply is final
        once the environment's ``user_stop`` holds or the user stopped (or there is none)."""
        turn: UserTurn | None = None
        if self.user is not None and self.user_stop() is None and self.user.stop_reason is None:
            turn = await self.user.respond(text)
        step = self.counters.steps
        self.log.append(LogEvent(step, "agent.reply", {}))
        if turn is None:
            return None
        for kind, attrs in turn.events:
            self.log.append(LogEvent(step, f"user.{kind}", attrs))
        if turn.stop is not None:
            return None
        return [Message(role="user", content=turn.text)]

    async def close(self) -> None:
        await super().close()
        self.db.close()

    # ---- internals ------------------------------------------------------------------------
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
        self.writes.attrs = {}  # what the call noted belongs to its event only
        step = self.counters.steps
        self.log.append(LogEvent(step, f"tool.{call.name if tool else '?'}", attrs))
