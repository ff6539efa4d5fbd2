"""The writer encodes each line once, with placeholders cut out and filled in
(``trajectory.line_encoding.encode_line``); these check it writes exactly the bytes of the
encoding in parts (``_encode_parts``, the chain's defining layout), sealed or not, for bodies
of every shape: keys sorting before, between and after ``digest`` and ``seal``, empty sides,
non-ASCII text, and bodies that carry a placeholder entry of their own deeper down."""

from __future__ import annotations

import random
from typing import Any

import pytest

from gymforge.trajectory.line_encoding import (
    DIGEST_PLACEHOLDER,
    SEAL_PLACEHOLDER,
    _encode_parts,
    encode_line,
)
from gymforge.trajectory.schema import chain_digest

KEY = b"test seal key"
KEYS = ("action", "c", "digest", "e", "record", "seal", "step", "z", "\u00e9t\u00e9")


def _value(rng: random.Random, depth: int) -> Any:
    kind = rng.randrange(8 if depth < 3 else 5)
    if kind == 0:
        return rng.randrange(-5, 5)
    if kind == 1:
        return rng.random() * 10
    if kind == 2:
        return rng.choice(['a"b', "caf\u00e9", "\\", "", '"digest":"' + DIGEST_PLACEHOLDER + '"'])
    if kind == 3:
        return rng.choice([None, True, False])
    if kind == 4:
        return rng.choice([DIGEST_PLACEHOLDER, SEAL_PLACEHOLDER])
    if kind == 5:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(3))]
    return _body(rng, depth + 1)


def _body(rng: random.Random, depth: int = 0) -> dict[str, Any]:
    keys = rng.sample(KEYS, rng.randrange(len(KEYS) + 1))
    return {k: _value(rng, depth) for k in keys}


@pytest.mark.parametrize("key", [None, KEY], ids=["unsealed", "sealed"])
def test_one_pass_encoding_writes_the_bytes_of_the_encoding_in_parts(key: bytes | None) -> None:
    rng = random.Random(35)
    for i in range(3000):
        body = _body(rng)
        previous, seal = f"{i:064x}", f"{i + 1:064x}"
        assert encode_line(previous, body, key, seal) == _encode_parts(previous, body, key, seal)


@pytest.mark.parametrize("key", [None, KEY], ids=["unsealed", "sealed"])
def test_a_body_holding_the_placeholders_deeper_down_is_encoded_in_parts(
    key: bytes | None,
) -> None:
    nested = {"digest": DIGEST_PLACEHOLDER, "seal": SEAL_PLACEHOLDER}
    body = {"action": nested, "digest": "x", "record": "step", "z": [nested]}
    digest, _, line = encode_line("", body, key, "")
    assert line == _encode_parts("", body, key, "")[2]
    # the nested ones, kept; the line's own is the digest
    assert line.count(DIGEST_PLACEHOLDER) == 2
    unsealed = {k: v for k, v in body.items() if k not in ("digest", "seal")}
    assert digest == chain_digest("", unsealed)
