"""Attack: stall the extract judge through the schema's ``uniqueItems`` keyword.

The ticket and shipping schemas say ``"uniqueItems": true`` for their lists; ``jsonschema``
checks it by sorting the items and, when they do not sort (one ``{}`` among numbers), by
comparing every pair in Python. A reply whose ``tags`` list is ``[{}, 0, 1, ..., 9999]``
(about 50 kB, inside the token budget) costs ~50 million comparisons: tens of seconds of the
judge's own time, in the event loop, for an answer that only ever scores 0. Success would
mean the judge compares items pairwise. The defence: uniqueness is checked by sorting
canonical keys (no pairwise fallback, no hashing the attacker could flood); the test counts
the comparisons jsonschema's pairwise helper makes, not time.
"""

from __future__ import annotations

import json

import pytest

from gymforge.core import Reply, SyncEnvironment
from gymforge.envs.extract import FAMILIES, ExtractEnv
from gymforge.verify.json_schema import JsonSchemaVerifier
from tests.jsonschema_pairs import count_pairwise

N = 3_000  # enough for millions of pairwise comparisons on the unfixed judge, still quick


def _flood(record: dict, key: str) -> str:
    return "```json\n" + json.dumps({**record, key: [{}, *range(N)]}) + "\n```"


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    return count_pairwise(monkeypatch)


def test_ticket_tags_flood_is_a_counted_failure_without_pairwise_checks(
    counted: list[int],
) -> None:
    env = SyncEnvironment(ExtractEnv())
    try:
        ticket = next(f for f in FAMILIES if f.name == "extract.ticket")
        env.reset(ticket.task_id(2, 1), 0)
        assert env.env.task is not None
        result = env.step(Reply(text=_flood(env.env.task.truth["record"], "tags")))
    finally:
        env.close()
    assert result.terminated and not result.info["success"]
    assert result.info["verdict"]["reason"] == "schema_violation"
    assert result.reward_components["task"] == 0.0
    assert counted[0] <= 2 * N, f"{counted[0]} pairwise comparisons"


@pytest.mark.parametrize(
    ("items", "unique"),
    [
        ([1, 1.0], False),  # JSON numbers: 1 equals 1.0
        ([1, True], True),  # true is not 1
        ([0, False], True),
        ([{"a": 1, "b": [2]}, {"b": [2.0], "a": 1}], False),  # key order does not matter
        ([[1, "a"], ["a", 1]], True),
        ([{}, [], None, "", 0], True),
        ([None, None], False),
        ([2**61 - 1, 2 * (2**61 - 1), 3 * (2**61 - 1)], True),  # equal hashes, distinct
    ],
)
def test_unique_items_keeps_json_schema_equality(items: list, unique: bool) -> None:
    verifier = JsonSchemaVerifier({"type": "array", "uniqueItems": True})
    assert verifier.judge_value(items).passed is unique
