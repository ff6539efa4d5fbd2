"""Extraction-specific red-team cases: replies that must never be judged a full success.

Each craft reads the task's hidden truth (the record and the distractor values the
document also shows) and returns the whole reply, or None when it cannot be built for
this task. Partial credit for near misses is by design; *success* (every field right and
a schema-valid record) must never be reached.

- ``distractor_swap``: the record with one field replaced by its distractor (the due date
  as the issue date, the subtotal as the total, a CC address as the reporter...);
- ``alternatives_key``: the record plus an ``alternatives`` object naming the distractors
  (a hedge the schema's ``additionalProperties: false`` refuses);
- ``duplicate_key``: the record written with one key twice, the distractor first;
- ``two_blocks``: a distractor-filled record, then the right one (a hedge);
- ``numbers_as_strings``: every number quoted;
- ``echo_document``: the document itself;
- ``record_in_reasoning``: the right record only inside ``<think>``;
- ``superset_list``: every list field padded with an extra item;
- ``deep_nesting`` and ``huge_answer``: depth and size bombs (the huge one is cut off by
  the token budget before it is judged; the verifier's own size cap is the next line).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from gymforge.core.types import Task
from gymforge.envs.extract.base import ExtractTruth, fenced_json
from gymforge.kit.redteam import CraftedReply
from gymforge.qa_profile import RedTeamCase

Craft = Callable[[Task], str | None]


def _truth(task: Task) -> ExtractTruth:
    return ExtractTruth.model_validate(task.truth)


def _swapped(t: ExtractTruth) -> dict[str, Any] | None:
    record, dis = t.record, t.distractors
    field = next((f for f in sorted(dis) if dis[f] != record[f]), None)
    return None if field is None else {**record, field: dis[field]}


def _swap(task: Task) -> str | None:
    wrong = _swapped(_truth(task))
    return None if wrong is None else fenced_json(wrong)


def _alternatives(task: Task) -> str | None:
    t = _truth(task)
    return fenced_json({**t.record, "alternatives": t.distractors}) if t.distractors else None


def _duplicate_key(task: Task) -> str | None:
    t = _truth(task)
    record, dis = t.record, t.distractors
    field = next((f for f in sorted(dis) if dis[f] != record[f]), None)
    if field is None:
        return None
    body = json.dumps(record)[1:]
    return "```json\n{" + json.dumps(field) + ": " + json.dumps(dis[field]) + ", " + body + "\n```"


def _two_blocks(task: Task) -> str | None:
    t = _truth(task)
    wrong = _swapped(t)
    return None if wrong is None else fenced_json(wrong) + "\n" + fenced_json(t.record)


def _strings(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strings(v) for v in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return value


def _numbers_as_strings(task: Task) -> str | None:
    record = _truth(task).record
    quoted = _strings(record)
    return None if quoted == record else fenced_json(quoted)


def _echo(task: Task) -> str:
    return task.prompt.split('Document:\n"""\n', 1)[-1].rstrip('"\n')


def _superset(task: Task) -> str | None:
    record = dict(_truth(task).record)
    lists = [k for k, v in record.items() if isinstance(v, list) and v and isinstance(v[0], str)]
    if not lists:
        return None
    for k in lists:
        record[k] = [*record[k], "other"]
    return fenced_json(record)


class ExtractAttack(CraftedReply):
    """Follows the oracle; replaces its reply by ``craft(task)``."""

    def __init__(self, craft: Craft) -> None:
        super().__init__(from_task=craft)


def _case(name: str, craft: Craft, description: str) -> RedTeamCase:
    return RedTeamCase(f"extract_{name}", lambda: ExtractAttack(craft), description)


CASES: tuple[RedTeamCase, ...] = (
    _case("distractor_swap", _swap, "one field taken from its distractor"),
    _case("alternatives_key", _alternatives, "the record plus an alternatives object"),
    _case("duplicate_key", _duplicate_key, "one key twice, the distractor first"),
    _case("two_blocks", _two_blocks, "a wrong record, then the right one"),
    _case("numbers_as_strings", _numbers_as_strings, "every number quoted"),
    _case("echo_document", _echo, "the document itself"),
    _case(
        "record_in_reasoning",
        lambda t: f"<think>{fenced_json(_truth(t).record)}</think>",
        "the right record hidden in reasoning",
    ),
    _case("superset_list", _superset, "list fields padded with an extra item"),
    _case("deep_nesting", lambda t: "```json\n" + "[" * 5000 + "]" * 5000 + "\n```", "depth"),
    _case("huge_answer", lambda t: '```json\n{"a": "' + "x" * 300_000 + '"}\n```', "size"),
)
