"""Jobs: one episode to play, named by ``(task_id, seed, rollout)``.

A job's key decides everything about its episode (its sampling seed, its episode id in a
run), so resume, retries on another executor and de-duplication all work by key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring

from gymforge.core.built import built, dataclass_made
from gymforge.core.env import Environment
from gymforge.core.policy import Policy
from gymforge.core.seeding import derive_seed, seed_of_canonical
from gymforge.trajectory.schema import SCHEMA_VERSION, EpisodeKeys


@dataclass(frozen=True)
class Job:
    index: int
    task_id: str
    seed: int
    rollout: int = 0

    @property
    def key(self) -> tuple[str, int, int]:
        return (self.task_id, self.seed, self.rollout)

    @property
    def label(self) -> str:
        """How log and error lines name this job."""
        return f"{self.task_id} seed {self.seed} rollout {self.rollout}"

    @property
    def sampling_seed(self) -> int:
        """``derive_seed("sampling", task_id, seed, rollout) % 2**31``; for a string id and
        plain int seed and rollout, from their canonical JSON written here (the encoder's
        own string escaping, ``ensure_ascii=False``: ``tests/rollout`` holds the two equal)."""
        task_id, seed, rollout = self.task_id, self.seed, self.rollout
        if type(task_id) is str and type(seed) is int and type(rollout) is int:
            text = f'["sampling",{encode_basestring(task_id)},{seed},{rollout}]'
            return seed_of_canonical(text) % 2**31
        return derive_seed("sampling", task_id, seed, rollout) % 2**31

    def keys(self, run_id: str, env: Environment, policy: Policy) -> EpisodeKeys:
        """The identity stamped on every record of this job's episode (any executor):
        ``EpisodeKeys`` of these values, built as validation builds it when they are exactly
        of their declared types (``episode_keys``)."""
        spec = env.spec
        texts = (
            run_id,
            f"{run_id}-{self.index:06d}",
            spec.id,
            spec.version,
            spec.renderer_version,
            policy.checkpoint,
        )
        numbers = (self.seed, self.rollout, self.sampling_seed)
        return episode_keys(self.task_id, texts, numbers, weight_version(policy))


_KEY_FIELDS: tuple[str, ...] = ("schema_version", "run_id", "episode_id", "task_id", "seed")
_KEY_FIELDS += ("env_id", "env_version", "renderer_version", "policy_checkpoint")
_KEY_FIELDS += ("weight_version", "rollout", "sampling_seed")
_BUILT_KEYS = tuple(EpisodeKeys.model_fields) == _KEY_FIELDS and (
    EpisodeKeys.model_fields["schema_version"].default == SCHEMA_VERSION
)
"""Whether ``EpisodeKeys`` has the fields :func:`episode_keys` builds (else it validates)."""
_KEYS_SET = frozenset(_KEY_FIELDS[1:])


def episode_keys(
    task_id: str,
    texts: tuple[str, str, str, str, str, str],
    numbers: tuple[int, int, int],
    weight_version: str | None,
) -> EpisodeKeys:
    """``EpisodeKeys(task_id=task_id, seed=..., rollout=..., sampling_seed=...,
    weight_version=weight_version, **texts)``: ``texts`` are ``run_id``, ``episode_id``,
    ``env_id``, ``env_version``, ``renderer_version`` and ``policy_checkpoint``, ``numbers``
    ``seed``, ``rollout`` and ``sampling_seed``. Given values exactly of their declared
    types (``str``; ``int``, the rollout not negative; a ``str`` weight version or None),
    which validation keeps as they are, it is built as validation builds it
    (``schema_version`` its default, the fields in their order, all but it set); any others
    are validated by the constructor (``tests/rollout/test_job_keys.py``)."""
    run_id, episode_id, env_id, env_version, renderer_version, checkpoint = texts
    seed, rollout, sampling_seed = numbers
    if (
        _BUILT_KEYS
        and type(task_id) is str
        and all(type(t) is str for t in texts)
        and type(seed) is int
        and type(rollout) is int
        and type(sampling_seed) is int
        and rollout >= 0
        and (weight_version is None or type(weight_version) is str)
    ):
        fields = {
            "schema_version": SCHEMA_VERSION,
            "run_id": run_id,
            "episode_id": episode_id,
            "task_id": task_id,
            "seed": seed,
            "env_id": env_id,
            "env_version": env_version,
            "renderer_version": renderer_version,
            "policy_checkpoint": checkpoint,
            "weight_version": weight_version,
            "rollout": rollout,
            "sampling_seed": sampling_seed,
        }
        return built(EpisodeKeys, fields, set(_KEYS_SET))
    return EpisodeKeys(
        run_id=run_id,
        episode_id=episode_id,
        task_id=task_id,
        seed=seed,
        env_id=env_id,
        env_version=env_version,
        renderer_version=renderer_version,
        policy_checkpoint=checkpoint,
        weight_version=weight_version,
        rollout=rollout,
        sampling_seed=sampling_seed,
    )


def _job(index: int, task_id: str, seed: int, rollout: int) -> Job:
    """``Job(index, task_id, seed, rollout)``, made as its ``__init__`` makes it
    (``tests/rollout/test_job_keys.py``)."""
    made = {"index": index, "task_id": task_id, "seed": seed, "rollout": rollout}
    return dataclass_made(Job, made)


def expand(pairs: Sequence[tuple[str, int]], group: int = 1) -> list[Job]:
    """Each ``(task_id, seed)`` pair becomes ``group`` jobs, rollouts 0..group-1."""
    if group < 1:
        raise ValueError("group must be >= 1")
    return [
        _job(i * group + r, task_id, seed, r)
        for i, (task_id, seed) in enumerate(pairs)
        for r in range(group)
    ]


def epoch_jobs(task_ids: Sequence[str], seed: int, group: int, epochs: int = 1) -> list[Job]:
    """``group`` rollouts of every task per epoch; epoch ``e`` plays rollouts
    ``e*group .. e*group+group-1``. Jobs are ordered epoch by epoch, in task order."""
    if group < 1 or epochs < 1:
        raise ValueError("group and epochs must be >= 1")
    per_epoch = len(task_ids) * group
    return [
        _job(e * per_epoch + i * group + r, task_id, seed, e * group + r)
        for e in range(epochs)
        for i, task_id in enumerate(task_ids)
        for r in range(group)
    ]


def weight_version(policy: Policy) -> str | None:
    """The policy's current weight version as a string (a callable is called), or None."""
    version = getattr(policy, "weight_version", None)
    version = version() if callable(version) else version
    return None if version is None else str(version)
