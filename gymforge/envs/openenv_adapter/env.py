"""``openenv:URL``: an environment served by OpenEnv (0.10) as a gymforge environment.

``URL`` is the ``http://HOST:PORT`` of a running OpenEnv server (its own uvicorn app, e.g. an
``openenv init`` environment started with ``uvicorn server.app:app``). Episodes run over its
WebSocket through OpenEnv's own ``GenericEnvClient``, one session per episode, closed when the
episode ends (OpenEnv's sessions are capped per server: ``max_concurrent_envs``).

- **Tasks.** When the server implements OpenEnv's Task API (``/{env}/splits``), a task is one
  ``(split, index)`` and ``reset`` passes both; splits named or typed ``test``/``eval``/... are
  the held-out split. Otherwise a task is one reset seed (family ``openenv.ENV``): OpenEnv's
  ``reset(seed, episode_id)`` is all a task can say, and held-out data is not supplied.
- **Actions.** A reply is the action (``ServerInfo.action_of``): its text fills the action's
  one required string field (the template's ``message``), or, when the action has other
  fields, is read as their JSON object, checked against the server's action schema. A reply
  that is not such an object gets a recoverable error, and no step is sent.
- **Episode ends.** OpenEnv's ``done`` terminates; gymforge's budget truncates (OpenEnv has
  no truncation flag of its own).
- **Failures.** A failing ``reset``, or ``state`` right after it (no agent action in either),
  is the server's: ``InfraError``, the episode retried. A failing ``step`` carries the
  agent's action, which can be its cause (a served environment that raises on a value it
  does not expect), and so does the ``state`` after it (asked within the step when the
  episode goes on; ``snapshot``, which the runner calls after every step, hands it back).
  Either is judged by the rule of ``gymforge.core.blame``: the probe is the episode's own
  reset on a new session (none of the agent's actions); answered, the episode's earlier
  actions are replayed there and the action sent once more. Failing again, it is the
  agent's outcome: the episode ends, counted, with a failed verdict ``env_failed_on_action``
  naming the server's error (``facts["server_error"]``), the reward so far kept. Answered,
  the failure did not recur, and the episode goes on, on the new session. A probe that
  fails leaves the failure the server's (retried): a dead server, a restarted one, one at
  capacity. A replay that fails is probed once more the same way: the server answering a
  reset again, the agent's own earlier actions are what it fails on (one that does not
  replay as it first ran: a name claimed in a store its sessions share), counted alike
  (``tests/interop/test_openenv_replay_fails_red20.py``); not answering, retried. Read as
  the server failing, any step the agent could make fail was retried as a fresh sample and
  given up unwritten (the policy's failures uncounted):
  ``tests/interop/test_openenv_step_raises_on_action_red19.py``.
- **Reward.** Each step's OpenEnv reward is the component ``openenv.reward``. OpenEnv has no
  success criterion, so no episode is a success, and no oracle: the checks that need one are
  declared not applicable ("not supplied by the framework").
- **State.** ``snapshot`` is the server's ``state`` (after a step, the one the step read). The
  episode id sent with ``reset`` is derived from ``(task_id, seed)``, so the template's
  otherwise random ``uuid4`` does not make every state differ.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from functools import cache
from importlib.metadata import version
from typing import Any

from openenv.core.generic_client import GenericEnvClient
from pydantic import BaseModel, ConfigDict

from gymforge.core.blame import blame_failure
from gymforge.core.env import EnvSpec
from gymforge.core.episode import Budget
from gymforge.core.errors import InfraError
from gymforge.core.seeding import canonical_json, derive_seed
from gymforge.core.types import Message, State, Task
from gymforge.core.verdict import Verdict
from gymforge.envs.interop_rows import rows_dataset
from gymforge.envs.openenv_adapter.server import ServerInfo, read_server
from gymforge.kit.tool_env import ToolEnv
from gymforge.qa_profile import QAProfile, ThroughputBudget, not_supplied
from gymforge.reward.standard import StepCosts
from gymforge.tasks import ChoiceKnob, ParamSpace, Split, TaskFamily, TaskSource

OPENENV_VERSION = version("openenv")
FRAMEWORK = f"OpenEnv {OPENENV_VERSION}"
ORACLE_CHECKS = ("scripted_baselines", "verifier_redteam", "error_paths")
REWARD = "openenv.reward"
FAILED_ON_ACTION = "env_failed_on_action"
CAPACITY_WAIT_S = 15.0
CAPACITY_POLL_S = 0.05


class OeTruth(BaseModel):
    """What ``reset`` sends: a seed, or a Task API ``(split, index)``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seed: int | None = None
    split: str | None = None
    index: int | None = None


class ResetSeeds(TaskFamily[OeTruth]):
    """One task per reset seed (a server without OpenEnv's Task API)."""

    def __init__(self, env_name: str) -> None:
        super().__init__(f"openenv.{env_name}", 1, {0: ParamSpace({"kind": ChoiceKnob(("seed",))})})
        self.env_name = env_name

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, OeTruth]:
        return f"{self.env_name}: reset", OeTruth(seed=r.randrange(2**31))


class ChannelReward:
    """The environment's last OpenEnv reward as the one component (plus malformed penalties)."""

    def __init__(self) -> None:
        self.last = 0.0

    def __call__(self, verdict: Verdict | None, costs: StepCosts) -> dict[str, float]:
        out = {REWARD: self.last}
        if costs.malformed_penalty:
            out["malformed"] = costs.malformed_penalty
        self.last = 0.0
        return out


def render(observation: Any, reward: Any, done: bool) -> str:
    """An OpenEnv observation as the message text the agent reads (canonical JSON)."""
    return canonical_json({"observation": observation, "reward": reward, "done": done})


class OpenEnvEnv(ToolEnv[OeTruth, dict[str, Any]]):
    """Base of the per-server classes ``env_class`` builds; not used directly."""

    server: ServerInfo
    budget = Budget(max_steps=8, max_tokens=8_192)

    def __init__(self) -> None:
        super().__init__()
        self.reward = self.channel = ChannelReward()
        self.client: GenericEnvClient | None = None
        self.first = ""
        self.reset_kwargs: dict[str, Any] = {}
        self.sent: list[dict[str, Any]] = []  # the episode's actions the server answered
        self.server_error: str | None = None  # the step failure that ended the episode
        self.state_now: State | None = None  # the server's state after the last step

    def init_world(self, task: Task, r: random.Random) -> dict[str, Any]:
        return {}

    def render_reset(self, task: Task) -> list[Message]:
        return [Message(role="user", content=self.first)]

    async def _disconnect(self) -> None:
        client, self.client = self.client, None
        if client is not None:
            with contextlib.suppress(Exception):  # the session is gone either way
                await client.close()

    async def _call(self, what: str, coro: Any) -> Any:
        try:
            return await coro
        except Exception as err:  # the server's failure, never the policy's: retried, unscored
            await self._disconnect()
            raise InfraError(
                f"OpenEnv server {self.server.url} failed on {what}: {type(err).__name__}: {err}"
            ) from err

    async def _reset_when_free(self, kwargs: dict[str, Any]) -> Any:
        """Reset, waiting (bounded) for a session slot while the server is at capacity: its
        ``max_concurrent_envs`` caps sessions, and another episode may hold the last one."""
        deadline = time.monotonic() + CAPACITY_WAIT_S
        while True:
            assert self.client is not None
            try:
                return await self.client.reset(**kwargs)
            except RuntimeError as err:
                if "CAPACITY_REACHED" not in str(err):
                    raise
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"{err} (waited {CAPACITY_WAIT_S:.0f} s for a session slot: the "
                        "server's max_concurrent_envs caps concurrent episodes)"
                    ) from err
            await self.client.close()
            await asyncio.sleep(CAPACITY_POLL_S)
            self.client = GenericEnvClient(base_url=self.server.url, connect_timeout_s=10.0)

    async def on_reset(self, task: Task) -> None:
        task_id, seed, truth = task.task_id, self.seed, self.truth_of(task)
        await self._disconnect()
        self.client = GenericEnvClient(base_url=self.server.url, connect_timeout_s=10.0)
        episode_id = f"gymforge-{derive_seed('openenv-episode', task_id, seed):016x}"
        kwargs: dict[str, Any] = {"episode_id": episode_id}
        if truth.split is not None:
            kwargs.update(split=truth.split, index=truth.index, seed=seed)
        else:
            kwargs["seed"] = truth.seed
        self.reset_kwargs, self.sent, self.server_error = kwargs, [], None
        self.state_now = None
        result = await self._call("reset", self._reset_when_free(kwargs))
        self.first = render(result.observation, result.reward, bool(result.done))

    async def on_reply(self, text: str) -> list[Message] | None:
        action = self.server.action_of(text)
        if isinstance(action, str):
            return [Message(role="user", content=action)]
        assert self.client is not None
        try:
            result = await self._advance(action)
        except Exception as err:
            result = await self._step_again(action, err)
            if result is None:  # the agent's action fails it: the episode ends, counted
                self.channel.last = 0.0
                return None
        self.sent.append(action)
        self.channel.last = float(result.reward or 0.0)
        message = Message(role="user", content=render(result.observation, result.reward, False))
        return None if result.done else [message]

    async def _advance(self, action: dict[str, Any]) -> Any:
        """``step(action)``'s result, and the server's state after it when the episode goes
        on (what ``snapshot`` hands back): a ``state`` that fails after the agent's action is
        that action's step failing, judged as one (``_step_again``)."""
        assert self.client is not None
        result = await self.client.step(action)
        if not result.done:
            self.state_now = await self.client.state()
        return result

    async def _step_again(self, action: dict[str, Any], err: Exception) -> Any:
        """After ``step(action)`` failed with ``err``: the step's result on a new session
        where the episode is replayed, or None (``server_error`` set) when the server answers
        the episode's reset (the probe: none of the agent's actions) and fails on ``action``
        once more; else the failure, an ``InfraError`` (retried). Module docstring."""
        failure = InfraError(
            f"OpenEnv server {self.server.url} failed on step: {type(err).__name__}: {err}"
        )
        await self._disconnect()

        async def without_actions() -> None:
            self.client = GenericEnvClient(base_url=self.server.url, connect_timeout_s=10.0)
            await self._call("reset", self._reset_when_free(self.reset_kwargs))

        await blame_failure(failure, without_actions)  # raises failure when it fails
        assert self.client is not None
        try:
            for earlier in self.sent:  # the agent's actions, answered before
                await self._call("step", self.client.step(earlier))
        except InfraError as replay:  # theirs too while the server answers a reset again
            await blame_failure(failure, without_actions)
            await self._disconnect()
            self.server_error = f"replaying the episode's actions: {str(replay)[:460]}"
            return None
        try:
            return await self._advance(action)
        except Exception as again:
            await self._disconnect()
            self.server_error = f"{type(again).__name__}: {str(again)[:500]}"
            return None

    async def verify(self, task: Task, world: dict[str, Any], reply: str) -> Verdict:
        verifier = f"openenv:{self.server.env_name}@{OPENENV_VERSION}"
        if self.server_error is not None:
            return Verdict(
                passed=False,
                reason=FAILED_ON_ACTION,
                facts={"done": False, "server_error": self.server_error, "last_reward": 0.0},
                verifier=verifier,
            )
        return Verdict(
            passed=False,
            reason="no_success_signal",
            facts={"done": True, "last_reward": self.channel.last},
            verifier=verifier,
        )

    async def on_end(self) -> None:
        await self._disconnect()  # the server's session slot is free for the next episode

    async def snapshot(self) -> State:
        await super().snapshot()  # refuses before reset
        if self.client is None:
            return {"closed": True}
        if self.state_now is None:  # after reset: no action of the agent's in it
            self.state_now = await self._call("state", self.client.state())
        return self.state_now

    async def close(self) -> None:
        await self._disconnect()
        await super().close()


def _task_api_source(server: ServerInfo) -> TaskSource:
    """The Task API's splits as datasets (one per split, evaluation splits held out whole)."""
    assert server.splits is not None
    name = f"openenv.{server.env_name}"

    def prompt(row: dict[str, Any]) -> str:
        return f"{server.env_name}: {row['split']} task {canonical_json(row['spec'])[:200]}"

    def truth(i: int, row: dict[str, Any]) -> OeTruth:
        return OeTruth(split=row["split"], index=row["index"])

    datasets = [
        rows_dataset(
            f"{name}.{split}",
            f"{server.url}/{server.env_name}/tasks",
            [{"split": split, "index": i, "spec": spec} for i, spec in enumerate(specs)],
            "heldout" if split in server.heldout else "train",
            prompt,
            truth,
        )
        for split, specs in server.splits.items()
        if specs
    ]
    held = frozenset(d.name for d in datasets if d.tasks[0].split == "heldout")
    source = TaskSource({}, Split(families=held))
    for ds in datasets:
        source = source.with_dataset(ds)
    return source


@cache
def env_class(url: str) -> type[OpenEnvEnv]:
    """The gymforge environment class of the OpenEnv server at ``url`` (read once)."""
    server = read_server(url)
    not_applicable = {
        c: not_supplied(FRAMEWORK, "no oracle: OpenEnv environments carry no reference solution")
        for c in ORACLE_CHECKS
    }
    if server.splits is None:
        tasks = TaskSource.of([ResetSeeds(server.env_name)])
        not_applicable["heldout_exclusion"] = not_supplied(
            FRAMEWORK, "the server has no Task API splits, so no held-out split"
        )
    else:
        tasks = _task_api_source(server)
        if not server.heldout:
            not_applicable["heldout_exclusion"] = not_supplied(
                FRAMEWORK, f"no split is named or typed as evaluation ({', '.join(server.splits)})"
            )
    attrs: dict[str, Any] = {
        "server": server,
        "spec": EnvSpec(
            f"openenv:{server.url}",
            "1.1.0",  # 1.1.0: a step that fails on the agent's action again is its failure
            renderer_version="1",
            description=f"{FRAMEWORK} environment {server.env_name} {server.version} at {url}.",
        ),
        "tasks": tasks,
        "qa": QAProfile(
            # one WebSocket round trip per step; the template allows one session at a time
            throughput=ThroughputBudget(reset_p50_ms=100.0, steps_per_s=20.0, concurrency=1),
            not_applicable=not_applicable,
        ),
        "oracle_action": None,  # not SupportsOracle: OpenEnv has no reference solution
    }
    return type(f"OpenEnv_{server.env_name}", (OpenEnvEnv,), attrs)
