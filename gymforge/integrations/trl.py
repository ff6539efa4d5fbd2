"""TRL integration: train on any gymforge environment with TRL's ``GRPOTrainer`` (TRL 1.16).

Four adapters, each grading through the environment's own ``reset``/``step`` path (gymforge
never re-implements a verifier for TRL):

- :func:`task_dataset`: a task set as a ``datasets.Dataset`` with columns ``prompt`` (chat
  messages, or plain text), ``task_id``, ``seed``, ``family``, ``difficulty``, ``split``,
  ``env_id``. The ``train`` split draws through ``TaskSource.sample(..., "train")`` and
  refuses any held-out task id it is handed; ``heldout`` exports the held-out split for eval.
- :func:`reward_funcs` / :class:`GymforgeReward`: an async reward function
  ``f(prompts, completions, completion_ids, **kwargs) -> list[float | None]`` that reads the
  ``task_id`` and ``seed`` columns, replays each completion as the episode's reply
  (``reset(task_id, seed)`` then ``step(Reply(completion))``) on a pool of environments,
  returns the episode reward, and logs every named reward component (and the success rate)
  through TRL's ``log_metric``. Rows that a ``rollout_func`` already played carry their
  reward in ``env_reward``; it is passed through, not graded twice.
- :class:`~gymforge.integrations.trl_rollout.GymforgeRollout`: a ``rollout_func`` playing
  multi-turn episodes against the generation server, concurrently.
- :func:`~gymforge.integrations.trl_env.environment_class`: an ``environment_factory`` class.

Only :func:`task_dataset` needs ``datasets``; nothing here imports torch or TRL.
"""

from __future__ import annotations

import asyncio
import math
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from gymforge.core.env import Environment
from gymforge.core.errors import UserError
from gymforge.core.seeding import derive_seed
from gymforge.core.types import Message, Reply
from gymforge.integrations.trl_common import EnvLike, completion_text, env_factory
from gymforge.integrations.trl_env import environment_class, submit_final_replies
from gymforge.integrations.trl_rollout import GymforgeRollout, prompt_key
from gymforge.registry.handle import task_source
from gymforge.tasks.source import TaskSource
from gymforge.tasks.split import HeldOutError

if TYPE_CHECKING:
    import datasets

__all__ = [
    "GymforgeReward",
    "GymforgeRollout",
    "completion_text",
    "env_factory",
    "environment_class",
    "prompt_key",
    "reward_funcs",
    "submit_final_replies",
    "task_dataset",
    "task_rows",
]

PromptFormat = Literal["chat", "text"]
LogMetric = Callable[[str, float], None]


def _task_source(env: Environment) -> TaskSource:
    tasks = task_source(env)
    if tasks is None:
        raise UserError(f"{env.spec.id} exposes no TaskSource (env.tasks); cannot export tasks")
    return tasks


def render_prompt(messages: Sequence[Message], fmt: PromptFormat) -> list[dict[str, str]] | str:
    """Observation messages as a TRL prompt: chat messages, or their contents joined."""
    if fmt == "chat":
        return [{"role": m.role, "content": m.content} for m in messages]
    return "\n\n".join(m.content for m in messages)


def task_rows(
    env: EnvLike,
    n: int | None = None,
    *,
    seed: int = 0,
    split: Literal["train", "heldout"] = "train",
    task_ids: Iterable[str] | None = None,
    difficulties: Iterable[int] | None = None,
    families: Iterable[str] | None = None,
    prompt_format: PromptFormat = "chat",
) -> list[dict[str, Any]]:
    """The rows of :func:`task_dataset` as plain dicts (no ``datasets`` needed).

    Either ``n`` ids are drawn with ``TaskSource.sample(n, seed, split, ...)`` or the given
    ``task_ids`` are used; either way every id is resolved and its split checked, so a
    ``train`` export raises :class:`HeldOutError` for a held-out task and a ``heldout``
    export refuses a training task. Each row's environment ``seed`` is derived from
    ``(seed, split, index)``. The prompt is what the environment renders on
    ``reset(task_id, seed)``, so system prompts and tools come from the environment itself.
    """
    if (n is None) == (task_ids is None):
        raise UserError("give exactly one of n and task_ids")
    factory = env_factory(env)

    async def build() -> list[dict[str, Any]]:
        instance = factory()
        try:
            tasks = _task_source(instance)
            if task_ids is not None:
                ids = list(task_ids)
            else:
                assert n is not None
                ids = tasks.sample(n, seed, split, difficulties, families)
            rows = []
            for i, task_id in enumerate(ids):
                task = tasks.resolve(task_id)
                if task.split != split:
                    if split == "train":
                        raise HeldOutError(f"task {task_id} is held out; a train export refuses it")
                    raise UserError(f"task {task_id} is a training task, not held out")
                row_seed = derive_seed("trl-row", seed, split, i) % 2**31
                obs = await instance.reset(task_id, row_seed)
                rows.append(
                    {
                        "prompt": render_prompt(obs.messages, prompt_format),
                        "task_id": task_id,
                        "seed": row_seed,
                        "family": task.family,
                        "difficulty": task.difficulty,
                        "split": task.split,
                        "env_id": instance.spec.id,
                    }
                )
            return rows
        finally:
            await instance.close()

    return asyncio.run(build())


def task_dataset(env: EnvLike, n: int | None = None, **options: Any) -> datasets.Dataset:
    """A gymforge task set as a ``datasets.Dataset`` that ``GRPOTrainer`` consumes.

    Same arguments as :func:`task_rows`. Use ``split="train"`` for ``train_dataset`` and
    ``split="heldout"`` for evaluation. Needs the ``datasets`` package
    (``pip install 'gymforge[train]'``).
    """
    try:
        import datasets
    except ImportError as err:  # pragma: no cover - depends on the install
        raise UserError("task_dataset needs datasets: pip install 'gymforge[train]'") from err
    return datasets.Dataset.from_list(task_rows(env, n, **options))


class GymforgeReward:
    """An async TRL reward function backed by a gymforge environment.

    ``await reward(prompts, completions, completion_ids, task_id=[...], seed=[...],
    log_metric=..., **kwargs)`` returns one float per completion: the episode reward (the
    sum of its named components). Each completion is graded on a pooled environment
    instance with ``reset(task_id, seed)`` then ``step(Reply(text))``; up to ``concurrency``
    gradings run at once, so environments that verify asynchronously (sandboxes, verifier
    pools) do not serialise. A completion whose episode the reply does not end (a
    multi-turn environment: use :class:`GymforgeRollout`) gets the reward so far and is
    counted in ``{prefix}/unfinished``.

    Metrics, each a batch mean sent through ``log_metric``: ``{prefix}/{component}`` for
    every reward component seen in the batch (0 where a completion lacks it),
    ``{prefix}/success`` and ``{prefix}/unfinished``. When the rows carry ``env_reward``
    (and ``env_reward_components``, ``env_success``) from a rollout function, those are
    used as they are; a row whose ``env_reward`` is None (a refused episode's placeholder,
    see :mod:`gymforge.integrations.trl_rollout`) gets None, which TRL excludes from its
    group's advantage statistics, and is left out of the metrics.
    """

    def __init__(self, env: EnvLike, *, concurrency: int = 16, prefix: str = "gymforge") -> None:
        self.factory = env_factory(env)
        self.concurrency = max(1, concurrency)
        self.prefix = prefix
        self.__name__ = f"{prefix}_reward"
        # by the loop itself, never its id: a new loop may get the id of one that ended
        self._pools: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, asyncio.Queue[Environment]
        ] = weakref.WeakKeyDictionary()
        self._made: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, int]
        self._made = weakref.WeakKeyDictionary()

    async def __call__(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        completion_ids: Sequence[Sequence[int]] | None = None,
        **kwargs: Any,
    ) -> list[float | None]:
        log_metric: LogMetric | None = kwargs.get("log_metric")
        if kwargs.get("env_reward") is not None:
            played = list(
                zip(
                    kwargs["env_reward"],
                    kwargs.get("env_reward_components") or [{}] * len(completions),
                    kwargs.get("env_success") or [False] * len(completions),
                    strict=True,
                )
            )
            outcomes = [
                (float(r), dict(c or {}), bool(s), True) for r, c, s in played if r is not None
            ]
            if log_metric is not None:
                self._log(outcomes, log_metric)
            # None: a refused episode's placeholder row, unscorable (excluded by TRL)
            return [None if r is None else float(r) for r, _, _ in played]
        else:
            task_ids, seeds = kwargs.get("task_id"), kwargs.get("seed")
            if task_ids is None or seeds is None:
                raise UserError(
                    "gymforge reward needs the dataset columns task_id and seed "
                    "(export the dataset with gymforge.integrations.trl.task_dataset)"
                )
            if not len(task_ids) == len(seeds) == len(completions):
                raise ValueError("task_id, seed and completions differ in length")
            texts = [completion_text(c) for c in completions]
            outcomes = await self.grade_many(list(zip(task_ids, seeds, texts, strict=True)))
        if log_metric is not None:
            self._log(outcomes, log_metric)
        return [reward for reward, _, _, _ in outcomes]

    async def grade_many(
        self, items: Sequence[tuple[str, int, str]]
    ) -> list[tuple[float, dict[str, float], bool, bool]]:
        """Grade ``(task_id, seed, reply_text)`` items concurrently, in order."""
        pool = self._pool()
        return list(await asyncio.gather(*(self._grade(pool, *item) for item in items)))

    async def grade(
        self, task_id: str, seed: int, text: str
    ) -> tuple[float, dict[str, float], bool]:
        """One completion: ``(reward, components, success)``."""
        reward, components, success, _ = await self._grade(self._pool(), task_id, seed, text)
        return reward, components, success

    def _pool(self) -> asyncio.Queue[Environment]:
        """This event loop's pool of environments (TRL calls from its own loop thread); no
        other loop is ever handed one of them."""
        key = asyncio.get_running_loop()
        pool = self._pools.get(key)
        if pool is None:
            pool = self._pools[key] = asyncio.Queue()
            self._made[key] = 0
        return pool

    async def _grade(
        self, pool: asyncio.Queue[Environment], task_id: str, seed: int, text: str
    ) -> tuple[float, dict[str, float], bool, bool]:
        key = asyncio.get_running_loop()
        if pool.empty() and self._made[key] < self.concurrency:
            self._made[key] += 1
            env = self.factory()
        else:
            env = await pool.get()
        try:
            await env.reset(str(task_id), int(seed))
            result = await env.step(Reply(text=text))
        except BaseException:
            await env.close()  # an env that raised mid-episode is not reused
            self._made[key] -= 1
            raise
        pool.put_nowait(env)
        components = dict(result.reward_components)
        return result.reward, components, bool(result.info.get("success")), result.done

    def _log(
        self, outcomes: Sequence[tuple[float, dict[str, float], bool, bool]], log: LogMetric
    ) -> None:
        n = len(outcomes)
        if not n:
            return
        names = sorted({name for _, comps, _, _ in outcomes for name in comps})
        for name in names:
            log(f"{self.prefix}/{name}", math.fsum(c.get(name, 0.0) for _, c, _, _ in outcomes) / n)
        log(f"{self.prefix}/success", sum(s for _, _, s, _ in outcomes) / n)
        log(f"{self.prefix}/unfinished", sum(not done for _, _, _, done in outcomes) / n)

    async def aclose(self) -> None:
        """Close this loop's pooled environments."""
        pool = self._pools.pop(asyncio.get_running_loop(), None)
        while pool is not None and not pool.empty():
            await pool.get_nowait().close()


def reward_funcs(env: EnvLike, *, concurrency: int = 16, prefix: str = "gymforge") -> list[Any]:
    """The reward functions for ``GRPOTrainer(reward_funcs=...)``: one
    :class:`GymforgeReward` whose value is the environment's total reward and which logs
    each named component through ``log_metric``."""
    return [GymforgeReward(env, concurrency=concurrency, prefix=prefix)]
