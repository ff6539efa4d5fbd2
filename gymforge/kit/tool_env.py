"""``ToolEnv``: the base class that makes an environment a short file.

It implements the whole ``Environment`` contract — budgets, the malformed-output policy,
tool dispatch with seeded faults, token counting, verdict-then-reward, and the
terminated/truncated bookkeeping — so an author writes only the domain:

- ``spec``, ``tasks`` (a ``TaskSource``), and optionally ``budget``, ``malformed``,
  ``reward``, ``system_prompt``;
- ``init_world(task, rng)``: the world state for this episode (a pydantic model or dict);
- ``@tool`` methods that read or change ``self.world`` and read ``self.truth``;
- ``verify(task, world, reply)``: the ``Verdict`` on the final reply and state;
- optionally ``fault_plan(task)``, ``on_reply`` (multi-turn dialogue), ``oracle_plan``.

A tool declared ``@tool(ends_episode=True)`` (a ``submit``) ends the episode when a call of
it succeeds: the call is validated, faulted and run like any other, and its result is in
``info["tool_result"]``; then the episode is judged exactly like a final reply (``verify``,
``info["verdict"]``, ``end_reason`` ``"verdict"``, terminated), the reply being the result
(``ToolResult.as_reply``: a string as it is, other values as canonical JSON). That step's
observation carries the tool message, and ``data`` has ``tool_result`` and ``final: True``;
``on_reply`` is not asked. A call that fails (unknown or invalid arguments, a ``ToolError``,
a crash) or is faulted ends nothing: the agent sees the error and may call again.

``verify`` and ``on_reply`` may be ``def`` or ``async def`` (``async`` when they wait on
another process); ``ToolEnv`` awaits both through one adapter (``gymforge.kit.hooks``).

Single-turn environments are the special case with no tools: the first reply is verified.

``ToolEnv`` provides these capabilities of ``gymforge.core.capabilities``: ``tasks``,
``task``, ``oracle``, ``oracle_plan``, ``qa``, ``toolset``, ``budget`` and ``datasets``
(whose default ``load_dataset`` refuses). A class attribute that misspells a declaration
(``qa_ = QAProfile(...)``) or gives one the wrong type is refused when the class is defined.

``ToolEnv[TruthT, WorldT]`` is generic over the hidden truth's pydantic model and the world's
type: ``class Ledger(ToolEnv[LedgerTruth, World])``. ``reset`` parses ``task.truth`` into
``self.truth`` once; hooks that receive a ``task`` read its truth with ``self.truth_of(task)``
(memoised), so mypy checks every truth access. ``Task.truth`` stays the JSON dict of the
boundary (task ids, records, the wire).
"""

from __future__ import annotations

import dataclasses
import random
import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, cast

from pydantic import BaseModel

from gymforge.core.env import EnvSpec, StepResult
from gymforge.core.episode import Budget, EndReason, EpisodeCounters, MalformedPolicy
from gymforge.core.errors import EpisodeStateError, InfraError, NoOracle, UserError
from gymforge.core.qa_profile import QAProfile
from gymforge.core.seeding import canonical_json, rng
from gymforge.core.tokens import ApproxTokenCounter, TokenCounter
from gymforge.core.types import Action, Invalid, Message, Observation, Reply, State, Task, ToolCall
from gymforge.core.verdict import Verdict
from gymforge.kit.declarations import check_declarations
from gymforge.kit.hooks import MaybeAsync, refuse_twins, settle
from gymforge.reward.standard import RewardFn, StandardReward, StepCosts
from gymforge.tasks.dataset import Dataset
from gymforge.tasks.source import TaskSource
from gymforge.tasks.truth import TruthT, codec_for, declared_truth
from gymforge.tools.faults import NO_FAULTS, FaultPlan
from gymforge.tools.result import ToolResult
from gymforge.tools.toolset import Toolset

if TYPE_CHECKING:
    from gymforge.core.capabilities import (
        HasBudget,
        HasQAProfile,
        HasTask,
        HasTasks,
        HasToolset,
        SupportsOracle,
        SupportsOraclePlan,
        TakesDatasets,
    )

WorldT = TypeVar("WorldT")


_Outcome = tuple[list[Message], dict[str, Any], StepCosts, EndReason | None, Verdict | None]
"""What handling one action produced: messages, data, costs, end reason, verdict."""

PARSE_ERROR_HINT = (
    "Your last message could not be parsed as a tool call or reply ({error}). "
    "Call one of the tools with valid JSON arguments, or reply in plain text."
)


class ToolEnv(ABC, Generic[TruthT, WorldT]):
    """Base class for tool-use and single-turn environments. See the module docstring."""

    spec: ClassVar[EnvSpec]
    tasks: TaskSource  # a class attribute; ``use_dataset`` extends it on one instance
    qa: ClassVar[QAProfile] = QAProfile()
    budget: Budget = Budget()
    malformed: MalformedPolicy = MalformedPolicy()
    reward: RewardFn = StandardReward()
    system_prompt: str = ""

    DECLARED: ClassVar[dict[str, type]] = {
        "spec": EnvSpec,
        "tasks": TaskSource,
        "qa": QAProfile,
        "budget": Budget,
        "malformed": MalformedPolicy,
        "system_prompt": str,
    }
    """The class-level declarations tooling reads, and the type each value must have."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        refuse_twins(cls)
        check_declarations(cls, ToolEnv.DECLARED)

    def __init__(self, token_counter: TokenCounter | None = None) -> None:
        self.token_counter: TokenCounter = token_counter or ApproxTokenCounter()
        self.toolset = Toolset(self)
        self.task: Task | None = None
        self._truth: TruthT | None = None
        self._world: WorldT | None = None
        self.seed = 0
        self.counters = EpisodeCounters()
        self.transcript: list[Message] = []
        self._done = True
        self._closed = False
        self._oracle: tuple[list[Action], int] | None = None

    # ---- typed truth and world ------------------------------------------------------------
    @classmethod
    def truth_model(cls) -> type[TruthT]:
        """The truth model this class is declared with (``UntypedTruth`` if it names none)."""
        return cast("type[TruthT]", declared_truth(cls, ToolEnv))

    def truth_of(self, task: Task) -> TruthT:
        """``task``'s hidden truth as this environment's model (parsed once per task)."""
        return cast("TruthT", codec_for(type(self), ToolEnv).parse(task))

    @property
    def truth(self) -> TruthT:
        """The current episode's hidden truth."""
        if self._truth is None:
            raise EpisodeStateError("truth read before reset()")
        return self._truth

    @property
    def world(self) -> WorldT:
        """The current episode's world, as ``init_world`` built it."""
        if self._world is None:
            raise EpisodeStateError("world read before reset()")
        return self._world

    @world.setter
    def world(self, value: WorldT) -> None:
        self._world = value

    # ---- the author's hooks -------------------------------------------------------------
    @abstractmethod
    def init_world(self, task: Task, r: random.Random) -> WorldT:
        """The episode's world state, built from the task and the ``world`` RNG stream only."""

    @abstractmethod
    def verify(self, task: Task, world: WorldT, reply: str) -> MaybeAsync[Verdict]:
        """Judge the final reply against the task's hidden truth and the world state. Write
        it ``async def`` when judging waits on other processes (a sandbox, a verifier
        pool), so that other episodes keep running meanwhile."""

    def fault_plan(self, task: Task) -> FaultPlan:
        """Faults for this task's tool calls. Default: none."""
        return NO_FAULTS

    def load_dataset(self, path: str | Path, name: str | None = None) -> Dataset:
        """Parse a dataset file into tasks. Environments that take datasets override this."""
        raise UserError(f"the {self.spec.id} environment does not take datasets")

    def use_dataset(self, dataset: Dataset) -> None:
        """Serve ``dataset``'s tasks too, on this instance (ids resolve through it)."""
        self.tasks = self.tasks.with_dataset(dataset)

    def on_reply(self, text: str) -> MaybeAsync[list[Message] | None]:
        """A non-final reply's answer (a user simulator), or None to end and verify. Write it
        ``async def`` when the answer comes from another process (an LLM-driven user)."""
        return None

    def oracle_plan(self, task: Task) -> list[Action] | None:
        """The reference solution path for ``task``, or None if this env has no oracle."""
        return None

    def render_reset(self, task: Task) -> list[Message]:
        msgs = [Message(role="system", content=self.system_prompt)] if self.system_prompt else []
        return [*msgs, Message(role="user", content=task.prompt)]

    def state(self) -> State:
        """The JSON world state for ``snapshot``; override for non-pydantic worlds."""
        world: Any = self._world
        if isinstance(world, BaseModel):
            return world.model_dump(mode="json")
        return dict(world) if world is not None else {}

    # ---- the contract -------------------------------------------------------------------
    async def reset(self, task_id: str, seed: int) -> Observation:
        if self._closed:
            raise EpisodeStateError("reset() on a closed environment")
        task = self.tasks.resolve(task_id)
        self.task, self.seed = task, seed
        self._truth = self.truth_of(task)
        self._world = self.init_world(task, rng(task_id, seed, "world"))
        self.toolset.reset(task_id, seed, self.fault_plan(task))
        self._oracle = None
        self.counters = EpisodeCounters()
        self.transcript = []
        self._done = False
        data = {"task_id": task_id, "family": task.family, "difficulty": task.difficulty}
        return self._observe(self.render_reset(task), data, tools=self.toolset.schemas)

    async def step(self, action: Action) -> StepResult:
        if self._done or self.task is None:
            raise EpisodeStateError("step() before reset() or after the episode ended")
        c = self.counters
        c.steps += 1
        action_tokens = self.token_counter.count_text(action_text(action))
        c.tokens += action_tokens
        timing: dict[str, float] = {}
        info: dict[str, Any] = {}
        if self.budget.max_tokens is not None and c.tokens > self.budget.max_tokens:
            # the action itself overran the context budget: cut off, never executed or judged
            info.update(end_reason="max_tokens", success=False)
            self._done = True
            obs = self._observe([], {"truncated": "max_tokens"})
            costs = StepCosts(action_tokens=action_tokens)
            verdict = self.over_budget_verdict(self.task, action, action_tokens)
            if verdict is not None:
                verdict, clock = verdict.split_timing()
                timing.update(clock)
                info["verdict"] = verdict.model_dump(mode="json")
            return StepResult.make(
                obs, self.reward(verdict, costs), truncated=True, info=info, timing=timing
            )
        if isinstance(action, Invalid):
            out = self._on_invalid(action, info)
        elif isinstance(action, ToolCall):
            out = await self._on_tool_call(action, info, timing)
        else:
            out = await self._on_reply(action, info, timing)
        messages, data, costs, end, verdict = out
        costs = dataclasses.replace(costs, action_tokens=action_tokens)
        if end is None:
            end = self.env_rule_end()
        obs = self._observe(messages, data)
        truncated = False
        if end is None:
            end = c.budget_end(self.budget)
            truncated = end is not None
        terminated = end is not None and not truncated
        components = self.reward(verdict, costs)
        if end is not None:
            self._done = True
            info["end_reason"] = end
            info["success"] = self.succeeded(verdict)
        return StepResult.make(
            obs, components, terminated=terminated, truncated=truncated, info=info, timing=timing
        )

    def _on_invalid(self, action: Invalid, info: dict[str, Any]) -> _Outcome:
        c, pol = self.counters, self.malformed
        c.malformed += 1
        c.consecutive_malformed += 1
        info["malformed"] = action.error[:500]
        end: EndReason | None = None
        if pol.mode == "end":
            end = "malformed"
        elif c.consecutive_malformed >= pol.max_consecutive:
            end = "malformed_cap"
        hint = PARSE_ERROR_HINT.format(error=action.error[:300])
        costs = StepCosts(malformed_penalty=pol.penalty if pol.mode != "recover" else 0.0)
        return (
            [Message(role="user", content=hint)],
            {"parse_error": action.error[:300]},
            costs,
            end,
            None,
        )

    async def _on_tool_call(
        self, action: ToolCall, info: dict[str, Any], timing: dict[str, float]
    ) -> _Outcome:
        c = self.counters
        c.consecutive_malformed = 0
        result, timing["tool_ms"] = await self.toolset.acall(action)
        bad_call = (
            not result.ok
            and result.error is not None
            and result.error.kind in ("unknown_tool", "invalid_arguments")
        )
        c.invalid_calls += bad_call
        c.tool_errors += not result.ok
        info["tool_result"] = result.model_dump(mode="json")
        if result.fault:
            info["fault"] = result.fault
        self.on_tool_result(action, result)
        message = Message(
            role="tool", content=result.render(), name=result.tool, tool_call_id=action.call_id
        )
        data, costs = {"tool_result": info["tool_result"]}, StepCosts(invalid_call=bad_call)
        tool = self.toolset.tools.get(action.name)
        if not (result.ok and result.fault is None and tool is not None and tool.ends_episode):
            return [message], data, costs, None, None
        verdict = await self._verify(result.as_reply(), info, timing)
        return [message], {**data, "final": True}, costs, "verdict", verdict

    async def _on_reply(
        self, action: Reply, info: dict[str, Any], timing: dict[str, float]
    ) -> _Outcome:
        self.counters.consecutive_malformed = 0
        follow_up = await settle(self.on_reply(action.text))
        if follow_up is not None:
            return follow_up, {}, StepCosts(), None, None
        verdict = await self._verify(action.text, info, timing)
        return [], {"final": True}, StepCosts(), "verdict", verdict

    async def snapshot(self) -> State:
        if self.task is None:
            raise EpisodeStateError("snapshot() before reset()")
        return self.state()

    async def close(self) -> None:
        self._closed = True
        self._done = True

    async def oracle_action(self) -> Action:
        """Walk ``oracle_plan``; a tool call that hit a fault or a retryable error is redone."""
        if self.task is None:
            raise EpisodeStateError("oracle_action() before reset()")
        if self._oracle is None:
            plan = self.oracle_plan(self.task)
            if not plan:
                raise NoOracle(self.no_oracle_reason(self.task))
            self._oracle = (plan, 0)
        plan, i = self._oracle
        i = min(i, len(plan))  # past the end, keep repeating the final action
        last = self.toolset.last_result
        if (
            i > 0
            and isinstance(plan[i - 1], ToolCall)
            and last is not None
            and (last.fault or (last.error is not None and last.error.retryable))
        ):
            i -= 1
        self._oracle = (plan, i + 1)
        return plan[i] if i < len(plan) else plan[-1]

    def no_oracle_reason(self, task: Task) -> str:
        """Why the oracle cannot play ``task`` (``oracle_plan`` gave no plan), naming the fix:
        the one ``error:`` line of ``--policy oracle`` on it. Override to say which field of
        a dataset row holds the reference solution."""
        return (
            f"{self.spec.id} has no reference solution for task {task.task_id}, so --policy oracle "
            "cannot play it: run another --policy"
        )

    def succeeded(self, verdict: Verdict | None) -> bool:
        """Whether the episode that ended with ``verdict`` is a success. Default: the verdict
        passed. Override when success needs more than the verdict's ``passed``."""
        return bool(verdict and verdict.passed)

    def over_budget_verdict(self, task: Task, action: Action, tokens: int) -> Verdict | None:
        """The verdict on an action that overran the token budget (it is cut off, never
        executed; the episode is truncated either way). Default None: no verdict. A
        single-turn environment can return one so that every answer gets a verdict."""
        return None

    def on_tool_result(self, call: ToolCall, result: ToolResult) -> None:
        """Called once per tool call, right after it ran, failed or was faulted, and before
        the step can end or be judged (an ending tool's ``verify`` already sees what this
        recorded). Default: nothing. World environments append their action-log event."""

    def env_rule_end(self) -> EndReason | None:
        """Override to end the episode on a hard domain rule (returns ``"env_rule"``)."""
        return None

    # ---- helpers ------------------------------------------------------------------------
    async def _verify(self, reply: str, info: dict[str, Any], timing: dict[str, float]) -> Verdict:
        assert self.task is not None
        t0 = time.perf_counter()
        try:
            verdict = await settle(self.verify(self.task, self.world, reply))
        except InfraError:  # its infrastructure failed (a dead sandbox): retried, never scored
            raise
        except Exception as err:  # the verifier's bug must not look like the policy's failure
            verdict = Verdict(
                passed=False,
                reason="verifier_error",
                # a verifier may attach bounded facts to its error (how a sandboxed
                # third-party scorer failed, its captured output)
                facts={
                    "error": f"{type(err).__name__}: {str(err)[:200]}",
                    **_error_facts(err),
                },
                verifier=type(self).__name__,
            )
            info["verifier_error"] = True
        timing["verify_ms"] = (time.perf_counter() - t0) * 1e3
        verdict, clock = verdict.split_timing()  # wall-clock facts must not reach info
        timing.update(clock)
        info["verdict"] = verdict.model_dump(mode="json")
        return verdict

    def _observe(
        self, messages: list[Message], data: dict[str, Any], tools: tuple[dict[str, Any], ...] = ()
    ) -> Observation:
        tokens = self.token_counter.count(messages)
        self.counters.tokens += tokens
        self.transcript.extend(messages)
        return Observation(
            messages=tuple(messages),
            data=data,
            tools=tools,
            tokens=tokens,
            tokenizer=self.token_counter.name,
            tokens_exact=self.token_counter.exact,
        )


def action_text(action: Action) -> str:
    """The text of an action that counts against the token budget."""
    if isinstance(action, Reply):
        return action.text
    if isinstance(action, Invalid):
        return action.raw
    return action.name + canonical_json(action.arguments)


if TYPE_CHECKING:  # ToolEnv provides these capabilities; mypy checks that it does

    def _provides(
        env: ToolEnv[Any, Any],
    ) -> tuple[
        HasTasks,
        HasTask,
        SupportsOracle,
        SupportsOraclePlan,
        HasQAProfile,
        HasToolset,
        HasBudget,
        TakesDatasets[Dataset],
    ]:
        return (env, env, env, env, env, env, env, env)


def _error_facts(err: Exception) -> dict[str, Any]:
    """The ``facts`` dict a verifier's error carries (``ScorerError``), else nothing."""
    facts = getattr(err, "facts", None)
    if not isinstance(facts, dict):
        return {}
    return {str(k): v for k, v in facts.items() if k != "error"}
