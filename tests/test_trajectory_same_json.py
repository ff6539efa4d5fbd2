"""The writer writes the text it validated when the validated record is the record again
(``trajectory.same_json``), and otherwise encodes the validated record: either way the
bytes of the plain encoding (``canonical_json`` of the validated dump), sealed or not."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from gymforge.core.seeding import canonical_json
from gymforge.trajectory.episode_encoding import seal_lines
from gymforge.trajectory.line_encoding import encode_line
from gymforge.trajectory.same_json import same_json
from gymforge.trajectory.schema import LINE_ADAPTER
from gymforge.trajectory.seal import ChainState

KEY = b"test seal key"


def _plain_lines(records: list[dict[str, Any]], key: bytes | None) -> list[str]:
    """The writer's lines the plain way: validate, dump, encode the dump."""
    lines, previous, seal = [], "", ""
    for rec in records:
        body = LINE_ADAPTER.validate_json(canonical_json({**rec, "digest": "0" * 64}))
        dumped = body.model_dump(mode="json")
        del dumped["seal"]
        previous, seal, line = encode_line(previous, dumped, key, seal)
        lines.append(line)
    return lines


def _episode(rng: random.Random) -> list[dict[str, Any]]:
    keys = {
        "schema_version": 1, "run_id": "r", "episode_id": "r-000001", "task_id": "t/v1/d1/s1",
        "seed": 3, "env_id": "e", "env_version": "1", "renderer_version": "1",
        "policy_checkpoint": "m", "weight_version": None, "rollout": 0, "sampling_seed": 7,
    }  # fmt: skip
    obs = {
        "rendered": [{"role": "user", "content": "Hi ü", "name": None, "tool_call_id": None}],
        "data": {"n": 1, "x": 1.5}, "tools": [], "tools_json": None, "tokens": 3,
        "tokenizer": "approx", "tokens_exact": False,
    }  # fmt: skip
    logprobs = [-(rng.randrange(97) / 16.0) for _ in range(64)]
    policy = {
        "capture_level": "tokens", "text": "ok", "tool_calls": None, "tool_format": None,
        "prompt_token_ids": list(range(40)), "completion_token_ids": list(range(64)),
        "logprobs": logprobs, "finish_reason": "stop", "model": "m", "weight_version": None,
        "model_turns": None,
    }  # fmt: skip
    step: dict[str, Any] = {
        **keys, "record": "step", "step": 1, "observation": obs,
        "action": {"kind": "reply", "text": "ok"}, "policy": policy, "tool_result": None,
        "reward": 1.0, "reward_components": {"task": 1.0}, "terminated": True,
        "truncated": False, "info": {"verdict": {"passed": True, "score": 1}},
        "state_fingerprint": "sha256:" + "a" * 64, "timing": {"step_ms": 0.5},
        "timestamp": 1.5,
    }  # fmt: skip
    end = {
        **keys, "record": "episode", "steps": 1, "family": "f", "difficulty": 1,
        "split": "train", "reward": 1.0, "reward_components": {"task": 1.0},
        "terminated": True, "truncated": False, "success": True, "failure_reason": None,
        "tokens": 10, "timing": {}, "timestamp": 2.5,
    }  # fmt: skip
    return [step, end]


def _variants(rng: random.Random) -> list[list[dict[str, Any]]]:
    """Episodes whose validated records are the records again, and ones where validation
    changes a leaf's type or sign (so the text must be encoded again)."""
    out = []
    for change in range(9):
        episode = _episode(rng)
        step, end = episode
        if change == 1:
            step["reward"] = 1  # an int where the schema has a float: dumped as 1.0
        elif change == 2:
            step["policy"]["logprobs"][5] = -0.0  # kept: -0.0
            step["policy"]["logprobs"][6] = 0.0
        elif change == 3:
            end["tokens"] = 10.0  # a float where the schema has an int: dumped as 10
        elif change == 4:
            end["success"] = 1  # an int where the schema has a bool: dumped as true
        elif change == 5:
            del step["policy"]["model_turns"]  # a default the dump adds
        elif change == 6:
            step["policy"]["logprobs"] = [*step["policy"]["logprobs"][:-1], -1]  # one int
        elif change == 7:
            step["info"]["nested"] = {"t": (1, 2.0), "z": -0.0}  # a tuple: a list once dumped
        elif change == 8:
            step["reward_components"] = {"task": 0}
        out.append(episode)
    return out


@pytest.mark.parametrize("key", [None, KEY], ids=["unsealed", "sealed"])
def test_the_lines_are_the_plain_encodings_bytes(key: bytes | None) -> None:
    rng = random.Random(35)
    for episode in _variants(rng):
        lines = seal_lines(copy.deepcopy(episode), key, ChainState())
        assert lines == _plain_lines(episode, key)


def test_same_json_is_true_only_for_values_with_the_same_text() -> None:
    values: list[Any] = [
        1, 1.0, True, 0, 0.0, -0.0, False, None, "1", [1], [1.0], [True], (1,), [1, 1.0],
        [1.0, 1], {"a": 1}, {"a": 1.0}, {"a": True}, {"b": 1}, [[-0.0]], [[0.0]],
        [0.0] * 40, [-0.0] + [0.0] * 39, list(range(40)), [*range(39), 39.0], {1: 1},
        {"a": [1, {"b": -0.0}]}, {"a": [1, {"b": 0.0}]}, [None, "x"], ["x", None],
    ]  # fmt: skip
    for a in values:
        for b in values:
            if same_json(a, b):
                assert canonical_json(a) == canonical_json(b), (a, b)
        if type(a) is not tuple and not (isinstance(a, dict) and 1 in a):
            assert same_json(a, copy.deepcopy(a)), a
