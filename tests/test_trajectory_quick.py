"""The writer's quick path (a record validated from its values, ``trajectory.quick``) writes
exactly the bytes of its defining path (the record encoded as strict JSON, that text
validated, the validated record encoded again) and refuses exactly what that path refuses,
with the same error: checked against a copy of the defining path on real episodes, sealed
and not, and on records carrying every value the two could treat differently."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from typing import Any

import pytest

from gymforge.core import IntegrityError
from gymforge.core.types import Message, Reply
from gymforge.envs.ledger import LedgerEnv
from gymforge.envs.math.env import MathEnv
from gymforge.rollout import EpisodeKeys, OraclePolicy, RandomPolicy, run_episode
from gymforge.trajectory import io
from gymforge.trajectory.seal import ChainState

KEY = b"quick path key"


def _records(env: Any, task_id: str, policy: Any = OraclePolicy) -> list[dict[str, Any]]:
    keys = EpisodeKeys(
        run_id="r",
        episode_id="r-0",
        task_id=task_id,
        seed=3,
        env_id=env.spec.id,
        env_version=env.spec.version,
        renderer_version=env.spec.renderer_version,
        policy_checkpoint=policy.checkpoint,
    )
    return asyncio.run(run_episode(env, policy(), keys))


def _defining(records: list[dict[str, Any]], key: bytes | None) -> list[str]:
    """The writer without its quick path: every record through ``_checked_body``."""
    lines, previous, seal = [], "", ""
    for i, rec in enumerate(records):
        body = io._checked_body(i, rec, {**rec, "digest": io._PLACEHOLDER})
        previous, seal, line = io._encode(previous, body, key, seal)
        lines.append(line)
    return lines


def _outcome(fn: Callable[[], list[str]]) -> list[str] | str:
    try:
        return fn()
    except IntegrityError as err:
        return f"IntegrityError: {err}"


def _same(records: list[dict[str, Any]]) -> list[str] | str:
    for key in (None, KEY):
        quick = _outcome(lambda: io._seal_lines(records, key, ChainState()))  # noqa: B023
        assert quick == _outcome(lambda: _defining(records, key))  # noqa: B023
    return quick


@pytest.mark.parametrize(
    ("env", "task_id", "policy"),
    [
        (LedgerEnv, "ledger.transfer/v1/d2/s5", OraclePolicy),
        (LedgerEnv, "ledger.transfer/v1/d3/s6", RandomPolicy),
        (MathEnv, "math.modular/v2/d1/s4", OraclePolicy),
    ],
)
def test_real_episodes_are_written_as_the_defining_path_writes_them(
    env: Any, task_id: str, policy: Any
) -> None:
    records = _records(env(), task_id, policy)
    assert isinstance(_same(records), list)


def _edit(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(rec: dict[str, Any]) -> None:
        target = rec
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = value

    return edit


EDITS: dict[str, Callable[[dict[str, Any]], None]] = {
    "int reward (a float field)": _edit(("reward",), 0),
    "int timing value": _edit(("timing", "step_ms"), 3),
    "bool for an int field": _edit(("step",), True),
    "float for an int field": _edit(("step",), 1.0),
    "str for a float field": _edit(("reward",), "0.5"),
    "tuple in an untyped field": _edit(("info", "pair"), (1, 2.5, "x")),
    "tuple for a typed list": _edit(("observation", "tools"), ()),
    "huge int for a float": _edit(("reward",), 10**20),
    "negative zero": _edit(("reward",), -0.0),
    "non-ASCII text": _edit(("info", "note"), "caf\u00e9 \u2603"),
    "lone surrogate in an untyped field": _edit(("info", "note"), "a\ud800b"),
    "lone surrogate in an id": _edit(("task_id",), "t\udfff"),
    "NaN in an untyped field": _edit(("info", "x"), math.nan),
    "NaN reward": _edit(("reward",), math.nan),
    "set in an untyped field": _edit(("info", "s"), {1, 2}),
    "object in an untyped field": _edit(("info", "o"), object()),
    "bytes for a str field": _edit(("env_id",), b"ledger"),
    "a message instance where a message is nested": _edit(
        ("observation", "rendered"), [Message(role="user", content="hi")]
    ),
    "an action instance": _edit(("action",), Reply(text="done")),
    "a model dict with an extra key": _edit(("action",), {"kind": "reply", "text": "x", "y": 1}),
    "an unknown key": _edit(("surprise",), 1),
}


@pytest.mark.parametrize("edit", EDITS.values(), ids=list(EDITS))
def test_edited_records_get_the_defining_paths_bytes_or_error(
    edit: Callable[[dict[str, Any]], None],
) -> None:
    records = _records(LedgerEnv(), "ledger.transfer/v1/d1/s3")
    edit(records[1])
    _same(records)


def test_model_instances_are_refused_as_not_json() -> None:
    records = _records(LedgerEnv(), "ledger.transfer/v1/d1/s3")
    EDITS["an action instance"](records[1])
    with pytest.raises(IntegrityError, match="is not JSON"):
        io.seal_episode(records)
