"""Values in a record (an environment's ``info``) that lie to the writer's fast path: it
encodes a record with orjson, validates that text and accepts it when the dump ``==`` the
record, reasoning that equal means plain JSON. A dict subclass whose ``items()`` differs from
its contents, a dict or dataclass whose ``__eq__`` always says yes (hiding a NaN, or a value
JSON cannot hold), an enum equal to its value: orjson writes what ``json`` never would, and
``==`` agrees. The fast path then wrote a line the defining path (``canonical_json`` and the
schema models) writes otherwise or refuses: a record it would refuse was accepted and
chained. The attack holds when the writer's bytes and refusals are the model path's."""

from __future__ import annotations

import copy
import dataclasses
import enum
import random
from collections.abc import Callable
from typing import Any

import pytest

from gymforge.core.errors import IntegrityError
from gymforge.trajectory import episode_encoding, fast_json
from gymforge.trajectory.seal import ChainState
from tests.test_trajectory_same_json import KEY, _episode

pytestmark = pytest.mark.skipif(fast_json.orjson_bytes({}) is None, reason="orjson not installed")


def _outcome(records: list[dict[str, Any]], key: bytes | None) -> list[str] | str:
    """The writer's lines or refusal, for the records as given (a deep copy would rebuild a
    lying dict from what its ``items()`` say)."""
    try:
        return episode_encoding.seal_lines(copy.copy(records), key, ChainState())
    except IntegrityError as err:
        return f"IntegrityError: {err}"


def _model_outcome(
    records: list[dict[str, Any]], key: bytes | None, monkeypatch: pytest.MonkeyPatch
) -> list[str] | str:
    with monkeypatch.context() as m:
        # the defining path: canonical_json and the models
        m.setattr(episode_encoding, "TWIN", None)
        return _outcome(records, key)


class _ItemsLie(dict[str, Any]):
    def items(self) -> Any:  # what json encodes; orjson reads the dict itself
        return [("lie", 1)]


class _EqualToAll(dict[str, Any]):
    def __eq__(self, other: object) -> bool:
        return True

    def __ne__(self, other: object) -> bool:
        return False

    __hash__ = None


class _Lying(enum.Enum):
    A = 1

    def __eq__(self, other: object) -> bool:
        return other == 1 or other is self

    __hash__ = object.__hash__


@dataclasses.dataclass(eq=False)
class _Agreeable:
    a: int = 1

    def __eq__(self, other: object) -> bool:
        return True


_ATTACKS: dict[str, Callable[[dict[str, Any]], None]] = {
    "a dict whose items() lie": lambda s: s.update(info=_ItemsLie(a=1)),
    "a nested dict whose items() lie": lambda s: s["info"].update(d=_ItemsLie(a=1)),
    "a dict equal to all, holding NaN": lambda s: s["info"].update(d=_EqualToAll(x=float("nan"))),
    "a dict equal to all, holding infinity": lambda s: s.update(
        reward_components=_EqualToAll(task=float("inf"))
    ),
    "an enum equal to its value": lambda s: s["info"].update(d=_Lying.A),
    "a dataclass equal to all": lambda s: s["info"].update(d=_Agreeable()),
}


_OPEN = pytest.mark.xfail(
    strict=True,
    reason="open: orjson writes any enum by its value; telling such an enum from its value "
    "needs an exact-type walk of every record (marshal.dumps, ~5 us a record)",
)


@pytest.mark.parametrize("key", [None, KEY], ids=["unsealed", "sealed"])
@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=_OPEN) if "enum" in n else n for n in sorted(_ATTACKS)],
)
def test_lying_values_are_written_or_refused_as_the_model_path_does(
    name: str, key: bytes | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    step, end = _episode(random.Random(11))
    _ATTACKS[name](step)
    assert _outcome([step, end], key) == _model_outcome([step, end], key, monkeypatch)
