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

Environments extend ``ToolEnv`` through hooks, never by overriding ``reset`` or ``step``
(whose bookkeeping every rule of the contract depends on): ``on_reset(task)`` sets up what
an episode needs beyond its world (a user simulator, a remote session), ``on_end()`` releases
it when the episode ends, ``extra_reward()`` adds reward components to a step (tools call
``shape(component, value)`` for the same), and ``potential()`` opts into potential-based
shaping, which leaves the optimal policy unchanged (``gymforge.kit.shaping``).

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
``task``, ``judged_truth`` (``truth``, which QA's truth witness reads), ``oracle``,
``oracle_plan``, ``qa``, ``toolset``, ``budget`` and ``datasets`` (whose default
``load_dataset`` refuses): mypy checks each in ``gymforge.kit.tool_env_provides``. A class
attribute that misspells a declaration (``qa_ = QAProfile(...)``) or gives one the wrong
type is refused when the class is defined.

``ToolEnv[TruthT, WorldT]`` is generic over the hidden truth's pydantic model and the world's
type: ``class Ledger(ToolEnv[LedgerTruth, World])``. ``reset`` parses ``task.truth`` into
``self.truth`` once; hooks that receive a ``task`` read its truth with ``self.truth_of(task)``
(memoised), so mypy checks every truth access. ``Task.truth`` stays the JSON dict of the
boundary (task ids, records, the wire).
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar, cast

from pydantic import BaseModel

from gymforge.core.env import EnvSpec, StepResult
from gymforge.core.episode import Budget, EpisodeCounters, MalformedPolicy
from gymforge.core.errors import EpisodeStateError, NoOracle, UserError
from gymforge.core.seeding import NO_DRAWS, rng
from gymforge.core.tokens import ApproxTokenCounter, TokenCounter
from gymforge.core.types import Action, Invalid, Message, Observation, Reply, State, Task, ToolCall
from gymforge.core.verdict import Verdict
from gymforge.kit.declarations import check_declarations
from gymforge.kit.env_hooks import ToolEnvHooks
from gymforge.kit.hooks import MaybeAsync, refuse_twins, settle
from gymforge.kit.made import observation_of
from gymforge.kit.oracle import OracleWalk
from gymforge.kit.shaping import SHAPING, PotentialShaping, add_components, check_gamma
from gymforge.kit.turns import PARSE_ERROR_HINT as PARSE_ERROR_HINT  # re-exported
from gymforge.kit.turns import Outcome, judge, on_invalid
from gymforge.kit.turns import action_text as action_text  # re-exported: the old path
from gymforge.qa_profile import QAProfile
from gymforge.reward.standard import RewardFn, StandardReward, StepCosts, with_tokens
from gymforge.tasks.dataset import Dataset
from gymforge.tasks.source import TaskSource
from gymforge.tasks.truth import TruthT, codec_for, declared_truth
from gymforge.tools.toolset import Toolset

WorldT = TypeVar("WorldT")


class ToolEnv(ToolEnvHooks, ABC, Generic[TruthT, WorldT]):
    """Base class for tool-use and single-turn environments. See the module docstring."""

    spec: ClassVar[EnvSpec]
    tasks: TaskSource  # a class attribute; ``use_dataset`` extends it on one instance
    qa: ClassVar[QAProfile] = QAProfile()
    budget: Budget = Budget()
    malformed: MalformedPolicy = MalformedPolicy()
    reward: RewardFn = StandardReward()
    system_prompt: str = ""
    shaping_gamma: ClassVar[float] = 1.0
    random_world: ClassVar[bool] = True
    """False: ``init_world`` draws nothing from its RNG (the world is the same for every
    seed); it is then handed ``core.seeding.NO_DRAWS``, which refuses any draw, instead of
    a freshly seeded ``world`` stream (seeding one is about 10 us an episode)."""

    DECLARED: ClassVar[dict[str, type]] = {
        "spec": EnvSpec,
        "tasks": TaskSource,
        "qa": QAProfile,
        "budget": Budget,
        "malformed": MalformedPolicy,
        "system_prompt": str,
        "shaping_gamma": float,
        "random_world": bool,
    }
    """The class-level declarations tooling reads, and the type each value must have."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        refuse_twins(cls)
        check_declarations(cls, ToolEnv.DECLARED)
        check_gamma(cls.shaping_gamma)

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
        self._oracle: OracleWalk | None = None
        self._shaped: dict[str, float] = {}
        self._potential: PotentialShaping | None = None
        self._system: tuple[str, Message | None] = ("", None)

    # ---- typed truth and world ------------------------------------------------------------
    @classmethod
    def truth_model(cls) -> type[TruthT]:
        """The truth model this class is declared with (``UntypedTruth`` if it names none)."""
        return cast("type[TruthT]", declared_truth(cls, ToolEnv))

    def truth_of(self, task: Task) -> TruthT:
        """``task``'s hidden truth as this environment's model (parsed once per task; the
        current episode's frozen truth is handed back without a look-up)."""
        truth = self._truth
        if truth is not None and task is self.task and truth.model_config.get("frozen"):
            return truth
        return cast("TruthT", codec_for(type(self), ToolEnv).parse(task))

    @property
    def truth(self) -> TruthT:
        """The current episode's hidden truth."""
        if self._truth is None:
            raise EpisodeStateError("truth read before reset()")
        return self._truth

    @property
    def judged_truth(self) -> TruthT | None:
        """The truth the current episode is judged with (``truth``; None before the first
        ``reset``): the ``judged_truth`` capability, which QA's truth witness reads."""
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

    # ---- the author's hooks (the optional ones, with their defaults: ToolEnvHooks) ---------
    @abstractmethod
    def init_world(self, task: Task, r: random.Random) -> WorldT:
        """The episode's world state, built from the task and the ``world`` RNG stream only."""

    @abstractmethod
    def verify(self, task: Task, world: WorldT, reply: str) -> MaybeAsync[Verdict]:
        """Judge the final reply against the task's hidden truth and the world state. Write
        it ``async def`` when judging waits on other processes (a sandbox, a verifier
        pool), so that other episodes keep running meanwhile."""

    def load_dataset(self, path: str | Path, name: str | None = None) -> Dataset:
        """Parse a dataset file into tasks. Environments that take datasets override this."""
        raise UserError(f"the {self.spec.id} environment does not take datasets")

    def use_dataset(self, dataset: Dataset) -> None:
        """Serve ``dataset``'s tasks too, on this instance (ids resolve through it)."""
        self.tasks = self.tasks.with_dataset(dataset)

    def shape(self, component: str, value: float) -> None:
        """Add ``value`` to reward component ``component`` of this step (for tools)."""
        self._shaped[component] = self._shaped.get(component, 0.0) + value

    def render_reset(self, task: Task) -> list[Message]:
        msgs = [self._system_message()] if self.system_prompt else []
        return [*msgs, Message(role="user", content=task.prompt)]

    def _system_message(self) -> Message:
        """``Message(role="system", content=self.system_prompt)``, built once for the prompt
        it was built of (messages are frozen: every episode may share it)."""
        prompt, kept = self._system
        if kept is None or prompt is not self.system_prompt:
            kept = Message(role="system", content=self.system_prompt)
            self._system = (self.system_prompt, kept)
        return kept

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
        self._done = True  # a reset that fails leaves no episode to step
        task = self.tasks.resolve(task_id)
        self._truth = None  # parsed for this task below, never the last episode's
        self.task, self.seed = task, seed
        self._truth = self.truth_of(task)
        r = rng(task_id, seed, "world") if self.random_world else NO_DRAWS
        self._world = self.init_world(task, r)
        self.toolset.reset(task_id, seed, self.fault_plan(task))
        self._oracle = None
        self.counters = EpisodeCounters()
        self.transcript = []
        self._shaped = {}
        pending = self.on_reset(task)
        if pending is not None:  # most environments set up nothing more
            await settle(cast("MaybeAsync[None]", pending))
        phi = self.potential()
        self._potential = None if phi is None else PotentialShaping(self.shaping_gamma, phi)
        self._done = False
        data = {"task_id": task_id, "family": task.family, "difficulty": task.difficulty}
        return self._observe(self.render_reset(task), data, tools=self.toolset.schemas)

    async def step(self, action: Action) -> StepResult:
        if self._done or self.task is None:
            raise EpisodeStateError("step() before reset() or after the episode ended")
        self._shaped = {}
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
            components = self.reward(verdict, costs)
            return await self._result(obs, components, False, True, info, timing)
        if isinstance(action, Invalid):
            out = on_invalid(c, self.malformed, action, info)
        elif isinstance(action, ToolCall):
            out = await self._on_tool_call(action, info, timing)
        else:
            out = await self._on_reply(action, info, timing)
        messages, data, costs, end, verdict = out
        costs = with_tokens(costs, action_tokens)
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
        return await self._result(obs, components, terminated, truncated, info, timing)

    async def _result(
        self,
        obs: Observation,
        components: dict[str, float],
        terminated: bool,
        truncated: bool,
        info: dict[str, Any],
        timing: dict[str, float],
    ) -> StepResult:
        """The step's result: the reward function's components plus ``shape``'s,
        ``extra_reward``'s and the potential-based term; ``on_end`` once it ended."""
        for name, value in self.extra_reward().items():
            self.shape(name, value)
        components = dict(components)
        add_components(components, self._shaped)
        if self._potential is not None:
            if SHAPING in components:
                raise ValueError(f"{self.spec.id} already has a {SHAPING!r} reward component")
            phi = None if terminated else self.potential()
            components[SHAPING] = self._potential.step(phi, terminated)
        result = StepResult.make(
            obs, components, terminated=terminated, truncated=truncated, info=info, timing=timing
        )
        if result.done and (pending := self.on_end()) is not None:
            await settle(cast("MaybeAsync[None]", pending))
        return result

    async def _on_tool_call(
        self, action: ToolCall, info: dict[str, Any], timing: dict[str, float]
    ) -> Outcome:
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
    ) -> Outcome:
        self.counters.consecutive_malformed = 0
        pending = self.on_reply(action.text)  # None for single-turn environments
        follow_up = (
            None
            if pending is None
            else await settle(cast("MaybeAsync[list[Message] | None]", pending))
        )
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
        """Walk ``oracle_plan`` (``gymforge.kit.oracle``): a tool call that hit a fault or a
        retryable error is sent again; past the plan's end its last action repeats."""
        if self.task is None:
            raise EpisodeStateError("oracle_action() before reset()")
        if self._oracle is None:
            plan = self.oracle_plan(self.task)
            if not plan:  # None (no oracle) or empty: the same task always hits it
                raise NoOracle(self.no_oracle_reason(self.task))
            self._oracle = OracleWalk(plan)
        return self._oracle.next(self.toolset.last_result)

    # ---- helpers ------------------------------------------------------------------------
    async def _verify(self, reply: str, info: dict[str, Any], timing: dict[str, float]) -> Verdict:
        task = self.task
        assert task is not None
        return await judge(
            lambda: self.verify(task, self.world, reply), type(self).__name__, info, timing
        )

    def _observe(
        self, messages: list[Message], data: dict[str, Any], tools: tuple[dict[str, Any], ...] = ()
    ) -> Observation:
        tokens = self.token_counter.count(messages)
        self.counters.tokens += tokens
        self.transcript.extend(messages)
        counter = self.token_counter
        return observation_of(tuple(messages), data, tools, tokens, counter.name, counter.exact)
