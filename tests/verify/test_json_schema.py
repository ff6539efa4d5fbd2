"""The json_schema verifier: extraction, safe parsing, schema facts, field checks."""

from __future__ import annotations

import time

import pytest
from jsonschema import SchemaError

from gymforge.verify.answer_block import extract_block
from gymforge.verify.json_schema import (
    FieldCheck,
    JsonRefused,
    JsonSchemaVerifier,
    nesting_depth,
    parse_json,
)

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["id", "total", "when", "tags", "items"],
    "properties": {
        "id": {"type": "string"},
        "total": {"type": "number"},
        "when": {"type": "string", "format": "date"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "paid": {"type": "boolean"},
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["sku", "qty"],
                "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
            },
        },
    },
}
GOLD = {
    "id": "INV-7",
    "total": 12.5,
    "when": "2023-04-01",
    "tags": ["a", "b"],
    "paid": True,
    "items": [{"sku": "X", "qty": 2}],
}
CHECKS = [
    FieldCheck("/id", "text"),
    FieldCheck("/total", "number", abs_tol=0.01),
    FieldCheck("/when", "exact"),
    FieldCheck("/tags", "set"),
    FieldCheck("/items", "length"),
    FieldCheck("/items/0/qty", "exact"),
]
V = JsonSchemaVerifier(SCHEMA, CHECKS)


def fenced(text: str) -> str:
    return f"```json\n{text}\n```"


def record(**changes: object) -> str:
    import json

    return json.dumps({**GOLD, **changes})


@pytest.mark.parametrize(
    "reply",
    [
        record(),
        fenced(record()),
        "Here it is:\n" + fenced(record()) + "\n",
        fenced(record()) + "\n" + fenced(record()),  # the same block twice is no hedge
        f"<think>{fenced(record(id='WRONG'))}</think>\n{fenced(record())}",
        "```\n" + record() + "\n```",
        record(id=" inv-7 "),  # text mode folds case and spaces
        record(total=12.505),  # within abs_tol
        record(total=12.5, tags=["b", "a", "a"]),  # a set
        record(items=[{"sku": "X", "qty": 2.0}]),  # 2.0 is the JSON number 2
    ],
)
def test_accept_table(reply: str) -> None:
    v = V.verify(reply, GOLD)
    assert v.passed and v.score == 1.0, v
    assert v.facts["fields_correct"] == v.facts["fields_total"] == len(CHECKS)
    assert v.verifier.startswith("json_schema@")


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("", "no_answer"),
        ("<think>" + record() + "</think>", "no_answer"),
        ("```json\n" + record(), "unclosed_block"),
        (fenced(record()) + "\nor maybe not", "text_after_answer"),
        (fenced(record(id="A")) + "\n" + fenced(record()), "hedge"),
        ("the answer is " + record(), "parse_error"),
        ('{"id": "INV-7", "id": "INV-8"}', "duplicate_key"),
        ('{"total": NaN}', "parse_error"),
        ('{"total": 1e999}', "parse_error"),
        ('{"total": ' + "9" * 50 + "}", "parse_error"),
        ("[" * 40 + "]" * 40, "too_deep"),
        ('{"a": "' + "x" * 200_000 + '"}', "too_long"),
        (record(extra=1), "schema_violation"),
        (record(total="12.5"), "schema_violation"),
        (record(when="April 1st"), "schema_violation"),
        (record(id="INV-8"), "wrong_fields"),
        (record(total=12.6), "wrong_fields"),
        (record(tags=["a"]), "wrong_fields"),
        (record(items=[]), "wrong_fields"),
    ],
)
def test_reject_table(reply: str, reason: str) -> None:
    v = V.verify(reply, GOLD)
    assert not v.passed
    assert v.reason == v.facts["reason"] == reason


def test_violations_list_each_path_and_message() -> None:
    v = V.verify(record(total="x", items=[{"sku": 3, "qty": "2"}], extra=True), GOLD)
    paths = [x["path"] for x in v.facts["violations"]]
    assert paths == ["", "/items/0/qty", "/items/0/sku", "/total"]
    assert v.facts["violations_total"] == 4
    assert all(x["message"] for x in v.facts["violations"])
    assert "not of type 'integer'" in v.facts["violations"][1]["message"]
    assert v.score == 0.0  # schema gate


def test_partial_credit_is_the_weighted_fraction_of_fields() -> None:
    v = V.verify(record(id="nope", total=99), GOLD)
    assert not v.passed and v.score == pytest.approx(4 / 6)
    assert v.facts["fields_correct"] == 4
    assert {m["path"] for m in v.facts["mismatches"]} == {"/id", "/total"}
    heavy = JsonSchemaVerifier(SCHEMA, [FieldCheck("/id", weight=3), FieldCheck("/total")])
    assert heavy.verify(record(total=1), GOLD).score == pytest.approx(0.75)
    ungated = JsonSchemaVerifier(SCHEMA, CHECKS, gate_on_schema=False)
    assert ungated.verify(record(extra=1), GOLD).score == 1.0


def test_missing_and_wrongly_typed_fields() -> None:
    checks = [FieldCheck("/paid", "exact"), FieldCheck("/total", "number"), FieldCheck("/nope")]
    v = JsonSchemaVerifier(SCHEMA, checks, gate_on_schema=False)
    got = v.verify(record(paid=1, total=True), GOLD)  # 1 is not true; true is not a number
    why = {m["path"]: m["why"] for m in got.facts["mismatches"]}
    assert why == {"/paid": "wrong", "/total": "wrong_type", "/nope": "missing"}


def test_extract_block_rules() -> None:
    assert extract_block("```json\n{}\n```\n\n").text == "{}"
    assert extract_block("```python\nx=1\n```\n```json\n[1]\n```").text == "[1]"
    assert extract_block("```json\n[1]\n```\n```python\nx\n```").reason == "text_after_answer"
    assert extract_block("</think>```json\n[2]\n```").text == "[2]"
    assert extract_block("x" * 500_000).reason == "too_long"


def _refuse_bombs() -> None:
    bomb = "[" * 1_000_000 + "]" * 1_000_000
    with pytest.raises(JsonRefused) as err:
        parse_json(bomb, max_chars=10_000_000)
    assert err.value.reason == "too_deep"
    v = V.verify("```json\n" + "{" * 200_000 + "\n```", GOLD)
    assert v.reason == "too_long"


def test_deep_input_is_refused_before_parsing() -> None:
    _refuse_bombs()
    assert nesting_depth('{"a": "[[[[["}') == 1  # brackets in strings do not count


@pytest.mark.perf
def test_deep_input_is_refused_fast() -> None:
    t0 = time.perf_counter()
    _refuse_bombs()
    assert time.perf_counter() - t0 < 2.0


def test_invalid_schema_is_an_authoring_error() -> None:
    with pytest.raises(SchemaError):
        JsonSchemaVerifier({"type": "nonsense"})
    with pytest.raises(ValueError):
        FieldCheck("no-leading-slash")
