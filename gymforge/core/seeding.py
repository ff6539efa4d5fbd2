"""Deterministic randomness: named RNG streams derived with a stable hash.

Every random choice in an environment comes from a stream named for its purpose, so that
adding a new random draw to one part never shifts the draws of another. Seeds are derived
with SHA-256 over a canonical encoding; Python's ``hash()`` is salted per process and is
never used.
"""

from __future__ import annotations

import _random
import hashlib
import json
import random
import threading
from collections.abc import Callable
from json import encoder as json_encoder
from typing import Any, cast

_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)
"""Built once: ``json.dumps`` with these options would build a new encoder on every call.
The encoder keeps no state between calls, so sharing it is safe."""


_PROBE = {"b": [1.5, -0.0, 1e-07, None, True, "\u00e9\n\u2028"], "a": {"c": 10**20}}


def _c_encoder(
    encoder: json.JSONEncoder, markers: dict[int, Any]
) -> Callable[[Any, int], list[str]] | None:
    """The C encoder ``encoder.encode`` builds on every call, built with the same arguments
    around ``markers``; None when this Python has none, or one taking other arguments, or
    one that writes ``_PROBE`` unlike ``encoder``."""
    maker = getattr(json_encoder, "c_make_encoder", None)
    if maker is None:
        return None
    strings = json_encoder.encode_basestring_ascii if encoder.ensure_ascii else None
    e = encoder
    try:
        encode = maker(
            markers,
            e.default,
            strings or json_encoder.encode_basestring,
            *(e.indent, e.key_separator, e.item_separator, e.sort_keys, e.skipkeys),
            e.allow_nan,
        )
        same = "".join(encode(_PROBE, 0)) == encoder.encode(_PROBE)
    except Exception:
        return None
    return cast(Callable[[Any, int], list[str]], encode) if same else None


class ReusedEncoder(threading.local):
    """``encoder.encode(value)``, with the C encoder it would build for each call built once
    per thread instead (a third of the cost of a small value): the same text and the same
    errors. Its ``markers`` (the containers being encoded, for the circular reference check)
    are empty between calls, and cleared after an encoding that raised, which may leave
    some; a nested call (a ``dict`` subclass whose ``items``, or a ``default``, encodes)
    takes ``encoder.encode``, with markers of its own, as every call had. The C encoder
    holds ``encoder.default`` as it was when the thread first encoded."""

    def __init__(self, encoder: json.JSONEncoder) -> None:
        self.encoder = encoder
        self.busy = False
        self.markers: dict[int, Any] = {}
        self.c_encode = _c_encoder(encoder, self.markers)

    def encode(self, value: Any) -> str:
        c_encode = self.c_encode
        if c_encode is None or self.busy or isinstance(value, str):
            return self.encoder.encode(value)
        self.busy = True
        try:
            return "".join(c_encode(value, 0))
        except BaseException:
            self.markers.clear()
            raise
        finally:
            self.busy = False


_REUSED = ReusedEncoder(_CANONICAL)


def canonical_json(value: Any) -> str:
    """The one canonical JSON text of ``value``: sorted keys, no spaces, UTF-8 kept:
    ``_CANONICAL.encode(value)`` by the thread's :class:`ReusedEncoder` (the same text and
    errors, tests/test_canonical_json.py); a state is fingerprinted at every step."""
    return _REUSED.encode(value)


def stable_hash(*parts: Any) -> bytes:
    """SHA-256 digest of the canonical JSON of ``parts``. Identical across processes and hosts."""
    return hashlib.sha256(canonical_json(list(parts)).encode()).digest()


def derive_seed(*parts: Any) -> int:
    """A 64-bit seed derived from ``parts`` (e.g. ``task_id, seed, "faults"``)."""
    return seed_of_canonical(canonical_json(list(parts)))


def seed_of_canonical(text: str) -> int:
    """``derive_seed(*parts)`` given ``text``, the ``canonical_json`` of ``list(parts)``: the
    first 8 bytes of its SHA-256, big-endian. For hot callers that write the canonical text
    of a few plain ints and strings directly (``tests/tasks/test_seed_fast_paths.py`` holds
    them equal to ``derive_seed``)."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def rng(task_id: str, seed: int, stream: str) -> random.Random:
    """The RNG stream ``stream`` of episode ``(task_id, seed)``. Same inputs, same draws."""
    return seeded(derive_seed(task_id, seed, stream))


_NEW = random.Random.__new__
_SEED = _random.Random.seed


def seeded(seed: int) -> random.Random:
    """``random.Random(seed)`` for an int ``seed`` (a derived one), in the same state, without
    the Python-level ``__init__`` and ``seed`` it goes through (for an int they only hand
    it to the C generator's own ``seed`` and clear ``gauss_next``): a fifth of its cost, and
    every task and episode builds a few (``tests/tasks/test_seed_fast_paths.py`` holds them
    equal)."""
    if type(seed) is not int:
        return random.Random(seed)
    r = _NEW(random.Random)
    _SEED(r, seed)
    r.gauss_next = None  # type: ignore[attr-defined]  # set by Random.seed, not declared
    return r


class NoDraws:
    """A stream that refuses every draw, and its state: handed where its receiver declared
    it draws nothing (``ToolEnv.random_world = False``), so that a draw made anyway fails
    loudly instead of coming from a stream other than the one named. It is no
    ``random.Random``: every attribute it is asked for (every draw, ``seed``, ``getstate``,
    ``__deepcopy__``) raises, copying or pickling it too, and the generator's own methods
    called on it (``random.Random.random(r)``) refuse a non-generator, so no draw can come
    from a state of its own (one for the whole process, which every episode would advance)."""

    __slots__ = ()
    _REFUSED = "this RNG stream was declared unused (random_world = False), yet drawn from"

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(self._REFUSED)

    def __reduce_ex__(self, protocol: object) -> Any:
        raise RuntimeError(self._REFUSED)


NO_DRAWS = cast(random.Random, NoDraws())
"""The one :class:`NoDraws` stream, typed as the stream it stands in for (it holds nothing to
share: every use raises)."""


def uniform(*parts: Any) -> float:
    """A single deterministic draw in [0, 1) keyed on ``parts``; no RNG state to carry."""
    return derive_seed(*parts) / 2.0**64


def fingerprint(state: Any) -> str:
    """Canonical state fingerprint: ``sha256:`` + hex SHA-256 of the canonical JSON."""
    return "sha256:" + hashlib.sha256(canonical_json(state).encode()).hexdigest()
