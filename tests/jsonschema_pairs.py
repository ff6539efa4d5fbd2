"""Counting ``jsonschema``'s pairwise equality checks: the attacks on ``uniqueItems`` assert
how many comparisons a judge made, never how long it took."""

from __future__ import annotations

import jsonschema._utils
import pytest


def count_pairwise(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A one-item list counting every ``jsonschema._utils.equal`` call from now on (the
    pairwise fallback of its ``uniqueItems`` check)."""
    calls = [0]
    equal = jsonschema._utils.equal

    def counting(one: object, two: object) -> bool:
        calls[0] += 1
        return equal(one, two)

    monkeypatch.setattr(jsonschema._utils, "equal", counting)
    return calls
