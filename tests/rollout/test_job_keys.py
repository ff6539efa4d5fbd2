"""``jobs.episode_keys`` (what ``Job.keys`` builds) against the validating ``EpisodeKeys``: the
same model (field values and their types, fields set, no extras or private values, the same
dump) for every value, hostile ones included (``str`` and ``int`` subclasses, bools, a
negative rollout, floats, None where a value is required), and the same error where the
constructor refuses; and ``Job.keys`` itself against the constructor over a real episode's
environment and policy."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gymforge.envs.math.env import MathEnv
from gymforge.rollout.jobs import Job, episode_keys, weight_version
from gymforge.rollout.scripted import OraclePolicy
from gymforge.trajectory.schema import EpisodeKeys


class Name(str):
    """A ``str`` subclass: validation turns it into a plain ``str``."""


class Count(int):
    """An ``int`` subclass."""


_TEXT = st.text(max_size=4) | st.builds(Name, st.text(max_size=3))
_ANY_TEXT = _TEXT | st.integers(0, 3) | st.none()
_INT = st.integers(-(2**70), 2**70) | st.integers(-3, 3).map(Count) | st.booleans()
_ANY_INT = _INT | st.floats(-2, 2) | st.none() | st.just("7")


def _same(got: EpisodeKeys, want: EpisodeKeys) -> None:
    assert type(got) is EpisodeKeys
    assert list(got.__dict__.items()) == list(want.__dict__.items())
    assert [type(v) for v in got.__dict__.values()] == [type(v) for v in want.__dict__.values()]
    assert got.model_fields_set == want.model_fields_set
    assert (got.__pydantic_extra__, got.__pydantic_private__) == (None, None)
    assert (want.__pydantic_extra__, want.__pydantic_private__) == (None, None)
    assert got.model_dump() == want.model_dump() and got == want


@given(
    task_id=_ANY_TEXT,
    texts=st.tuples(*[_ANY_TEXT] * 6),
    numbers=st.tuples(_ANY_INT, _ANY_INT, _ANY_INT),
    version=_ANY_TEXT,
)
def test_episode_keys_is_the_constructor(
    task_id: Any, texts: Any, numbers: Any, version: Any
) -> None:
    run_id, episode_id, env_id, env_version, renderer_version, checkpoint = texts
    seed, rollout, sampling_seed = numbers
    fields = dict(run_id=run_id, episode_id=episode_id, task_id=task_id, seed=seed)
    fields.update(env_id=env_id, env_version=env_version, renderer_version=renderer_version)
    fields.update(policy_checkpoint=checkpoint, weight_version=version, rollout=rollout)
    try:
        want = EpisodeKeys(**fields, sampling_seed=sampling_seed)
    except ValueError as err:
        with pytest.raises(type(err)):
            episode_keys(task_id, texts, numbers, version)
        return
    _same(episode_keys(task_id, texts, numbers, version), want)


@pytest.mark.parametrize("job", [Job(0, "math.arith/v2/d1/s5", 3), Job(123456, "t", 0, 9)])
def test_job_keys_are_the_constructors(job: Job) -> None:
    env, policy = MathEnv(), OraclePolicy()
    want = EpisodeKeys(
        run_id="run",
        episode_id=f"run-{job.index:06d}",
        task_id=job.task_id,
        seed=job.seed,
        env_id=env.spec.id,
        env_version=env.spec.version,
        renderer_version=env.spec.renderer_version,
        policy_checkpoint=policy.checkpoint,
        weight_version=weight_version(policy),
        rollout=job.rollout,
        sampling_seed=job.sampling_seed,
    )
    _same(job.keys("run", env, policy), want)
