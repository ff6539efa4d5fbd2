"""Attack: crash or stall the OpenEnv adapter with the JSON text of an action.

An OpenEnv environment whose action is not one string field takes the agent's reply as a
JSON object and checks it against the server's action schema in the gymforge process
(``ServerInfo.action_of``) before it is sent. A reply nested 100,000 deep made ``json``
raise ``RecursionError`` out of the episode's step (an error of the environment, not the
agent's mistake), and a ``set`` field (pydantic writes ``"uniqueItems": true``) holding
thousands of unsortable items made ``jsonschema`` compare every pair, seconds of the event
loop per step. Success would mean an agent's text can end or stall episodes as failures
of the environment. The defence: the reply is parsed by the bounded parser the JSON judge
uses and checked by its validator, and each refusal is the agent's recoverable answer.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from interop_helpers import needs

from tests.jsonschema_pairs import count_pairwise

pytestmark = needs("openenv")


def _server() -> Any:
    from gymforge.envs.openenv_adapter.server import ServerInfo  # the package needs openenv

    return ServerInfo("http://127.0.0.1:9", "probe", "0.1", SCHEMA, None, frozenset())


SCHEMA = {
    "type": "object",
    "properties": {
        "tags": {"type": "array", "items": {}, "uniqueItems": True},
        "command": {"type": "string"},
    },
    "required": ["tags", "command"],
}
N = 3_000


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000,
        '{"tags": ' + "[" * 100_000 + "]" * 100_000 + ', "command": "x"}',
        '{"tags": [], "command": "x", "command": "y"}',  # a duplicate key, a hedge
        '{"tags": [NaN], "command": "x"}',
    ],
)
def test_a_hostile_json_action_is_the_agents_recoverable_mistake(text: str) -> None:
    answer = _server().action_of(text)
    assert isinstance(answer, str) and answer


def test_many_unsortable_set_items_are_not_compared_pairwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = count_pairwise(monkeypatch)
    flood = json.dumps({"tags": [{}, *range(N)], "command": "x"})
    assert isinstance(_server().action_of(flood), dict)  # unique: a valid action
    repeated = json.dumps({"tags": [{}, *range(N), 7], "command": "x"})
    answer = _server().action_of(repeated)
    assert isinstance(answer, str) and "non-unique" in answer
    assert calls[0] <= 2 * N, f"{calls[0]} pairwise comparisons"


def test_a_valid_action_is_taken_as_sent() -> None:
    assert _server().action_of('{"tags": [1, "a"], "command": "ls"}') == {
        "tags": [1, "a"],
        "command": "ls",
    }
