"""A policy that keeps the token-id and logprob lists it returned (a buffer it reuses) and
changes them from its own thread while the writer, in the writer's thread, seals the
episode (or an environment's thread that changes a record's value meanwhile). The writer's
fast path lifts those lists out of the text it validates and puts them back into the dump:
when it put back the policy's own lists, the line held what they held when it was encoded,
not what was validated (here a string among token ids: a record the schema refuses, sealed
and chained as valid); and when it wrote the text of a first reading of the record after
validating a second, a value refused at the first (a string reward component) went into the line.
The attack holds when the writer's outcome is the model path's for one reading of the
record, before the change or after it: the model path validates one reading and writes its
own copy of it."""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import Any

import pytest

from gymforge.core.errors import IntegrityError
from gymforge.trajectory import episode_encoding, fast_json
from gymforge.trajectory.schema import LINE_ADAPTER
from gymforge.trajectory.seal import ChainState
from tests.test_trajectory_same_json import KEY, _episode

pytestmark = pytest.mark.skipif(fast_json.orjson_bytes({}) is None, reason="orjson not installed")


def _outcome(records: list[dict[str, Any]], key: bytes | None) -> list[str] | str:
    try:
        return episode_encoding.seal_lines(records, key, ChainState())
    except IntegrityError as err:
        return f"IntegrityError: {err}"


def _lists_changed(step: dict[str, Any]) -> None:
    policy = step["policy"]
    policy["completion_token_ids"][0] = "x"
    policy["logprobs"].append(0.5)
    policy["prompt_token_ids"].clear()


def _component(value: object) -> Callable[[dict[str, Any]], None]:
    return lambda step: step["reward_components"].update(task=value)  # the dict itself


_Change = Callable[[dict[str, Any]], None]
_CHANGES: dict[str, tuple[_Change, _Change]] = {  # (the step before, the change)
    "policy lists": (lambda s: None, _lists_changed),
    # validation turns 1 into 1.0: the fast path encodes the dump again
    "policy lists, int reward": (lambda s: s.update(reward=1), _lists_changed),
    "a reward component made valid": (_component("bad"), _component(0.5)),
    "a reward component made valid, int": (_component("bad"), _component(1)),
}


@pytest.mark.parametrize("moment", range(3))
@pytest.mark.parametrize("change", sorted(_CHANGES))
@pytest.mark.parametrize("key", [None, KEY], ids=["unsealed", "sealed"])
def test_a_record_changed_while_sealed_is_written_as_one_reading_of_it(
    key: bytes | None, change: str, moment: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other thread runs right after the writer's ``moment``-th orjson encoding."""
    before, changed = _CHANGES[change]
    records = _episode(random.Random(5))
    before(records[0])
    later = copy.deepcopy(records)
    changed(later[0])
    with monkeypatch.context() as m:
        # the defining path: canonical_json and the models
        m.setattr(episode_encoding, "TWIN", None)
        readings = [_outcome(copy.deepcopy(r), key) for r in (records, later)]
    assert readings[0] != readings[1]

    step = copy.deepcopy(records[0])
    read = fast_json.orjson_bytes
    calls: list[bool] = []

    def read_then_change(value: Any) -> bytes | None:
        raw = read(value)
        if len(calls) == moment:  # the other thread runs now
            changed(step)
        calls.append(True)
        return raw

    monkeypatch.setattr(fast_json, "orjson_bytes", read_then_change)
    outcome = _outcome([step, copy.deepcopy(records[1])], key)
    assert calls  # the writer encodes with orjson: the other thread ran at moment 0
    # a writer that stopped reading before the moment came saw the record unchanged
    assert outcome in (readings if len(calls) > moment else readings[:1])
    for line in outcome if isinstance(outcome, list) else ():
        LINE_ADAPTER.validate_json(line)
