"""Fast paths give exactly what the plain code gives: canonical JSON, text scrubbing, the
sealed trajectory line and the oracle check."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gymforge.core.env import SupportsOracle, has_oracle
from gymforge.core.seeding import canonical_json
from gymforge.core.types import scrub_text
from gymforge.envs.ledger import LedgerEnv
from gymforge.trajectory.line_encoding import chained_line
from gymforge.trajectory.schema import chain_digest

VALUES: list[Any] = [
    {"b": 1, "a": [1.5, -0.0, 1e300, None, True], "é": "ünï \u2028 \ud7ff"},
    ["ledger.transfer/v1/d1/s5", 1, "world"],
    {"digest": "x", "a": {"z": [], "y": {}}, "zz": ""},
    "plain",
    12345678901234567890,
]


def plain_canonical(value: Any) -> str:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


@pytest.mark.parametrize("value", VALUES)
def test_canonical_json_is_json_dumps_with_the_canonical_options(value: Any) -> None:
    assert canonical_json(value) == plain_canonical(value)


def test_canonical_json_refuses_what_json_dumps_refuses() -> None:
    looped: list[Any] = []
    looped.append(looped)
    for bad, error in ((float("nan"), ValueError), ({1, 2}, TypeError), (looped, ValueError)):
        with pytest.raises(error):
            canonical_json(bad)
        with pytest.raises(error):
            canonical_json(bad)  # and again: no state left behind by the failure


def test_scrub_text_ascii_fast_path_and_surrogates() -> None:
    assert scrub_text("plain ascii") == "plain ascii"
    assert scrub_text("ünï") == "ünï"
    assert scrub_text("a\ud800b") == "a\ufffdb"
    assert scrub_text({"k\udfff": ["\ud83d", "ok"]}) == {"k\ufffd": ["\ufffd", "ok"]}


@pytest.mark.parametrize(
    "body",
    [
        {"a": 1, "digest": "0" * 64, "z": [1]},
        {"a": 1, "b": 2},  # every key before "digest"
        {"x": 1, "y": 2},  # every key after
        {},
    ],
)
def test_chained_line_is_chain_digest_then_canonical_json(body: dict[str, Any]) -> None:
    digest, line = chained_line("ab" * 32, dict(body))
    assert digest == chain_digest("ab" * 32, body)
    assert line == canonical_json({**body, "digest": digest})


def test_has_oracle_agrees_with_the_protocol_check() -> None:
    class Blocked(LedgerEnv):
        oracle_action = None  # type: ignore[assignment]

    class OnInstance:
        def __init__(self) -> None:
            self.oracle_action = lambda: None

    for env in (LedgerEnv(), Blocked(), OnInstance(), object()):
        assert has_oracle(env) == isinstance(env, SupportsOracle)
    assert has_oracle(LedgerEnv()) and not has_oracle(Blocked())
