"""Tool-call parsing: structured calls, text calls, replies, and never raising."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gymforge.core.types import Invalid, Reply, ToolCall
from gymforge.rollout.parsing import (
    capture_fields,
    load_arguments,
    parse_assistant_message,
    parse_text,
)
from tests.budget import examples


def call(name: Any = "f", arguments: Any = '{"a": 1}', cid: Any = "id-1") -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_structured_call_keeps_id_and_echoes_verbatim() -> None:
    parsed = parse_assistant_message(
        {"content": "let me look", "tool_calls": [call(arguments='{"a":  1}')]}
    )
    assert parsed.action == ToolCall(name="f", arguments={"a": 1}, call_id="id-1")
    assert parsed.assistant_message == {
        "role": "assistant",
        "content": "let me look",
        "tool_calls": [call(arguments='{"a":  1}')],  # arguments text untouched
    }


def test_structured_call_without_id_gets_callers_id() -> None:
    parsed = parse_assistant_message({"content": None, "tool_calls": [call(cid=None)]}, "call_3")
    assert isinstance(parsed.action, ToolCall) and parsed.action.call_id == "call_3"


def test_bad_json_arguments_are_invalid_with_raw_text() -> None:
    parsed = parse_assistant_message({"content": None, "tool_calls": [call(arguments='{"a": ')]})
    action = parsed.action
    assert isinstance(action, Invalid)
    assert "not valid JSON" in action.error
    assert action.raw == '<tool_call>{"name": "f", "arguments": {"a": }</tool_call>'
    # echoed as text: a tool_calls message no tool result answers would be refused
    assert parsed.assistant_message == {"role": "assistant", "content": action.raw}


def test_arguments_edge_cases() -> None:
    assert load_arguments("") == ({}, None)
    assert load_arguments(None) == ({}, None)
    assert load_arguments({"x": 1}) == ({"x": 1}, None)
    for bad, why in [
        ("[1, 2]", "JSON object, got array"),
        ('{"x": NaN}', "not valid JSON"),
        ('{"x": Infinity}', "not valid JSON"),
        ("[" * 100_000, "not valid JSON"),
        ('{"x": ' + "9" * 5000 + "}", "not valid JSON"),
        (7, "must be JSON text"),
    ]:
        args, error = load_arguments(bad)
        assert args is None and error is not None and why in error, (bad, error)


def test_too_deep_arguments_are_invalid() -> None:
    deep = "[" * 150 + "]" * 150
    parsed = parse_assistant_message({"tool_calls": [call(arguments='{"x": ' + deep + "}")]})
    assert isinstance(parsed.action, Invalid) and "refused" in parsed.action.error


def test_multiple_calls_are_invalid() -> None:
    parsed = parse_assistant_message({"tool_calls": [call(), call(name="g", cid="id-2")]})
    assert isinstance(parsed.action, Invalid)
    assert parsed.action.error.startswith("2 tool calls in one turn")
    assert parsed.action.raw.count("<tool_call>") == 2


def test_missing_name_or_wrong_type_is_invalid() -> None:
    for c in [call(name=""), call(name=None), {"id": "x", "type": "custom", "function": {}}]:
        assert isinstance(parse_assistant_message({"tool_calls": [c]}).action, Invalid)
    assert isinstance(parse_assistant_message({"tool_calls": ["nonsense"]}).action, Invalid)


def test_text_call() -> None:
    text = 'Sure.\n<tool_call>{"name": "f", "arguments": {"a": [1, 2]}}</tool_call>'
    assert parse_text(text, "call_1") == ToolCall(
        name="f", arguments={"a": [1, 2]}, call_id="call_1"
    )
    # the closing tag eaten by a stop string; "parameters" and JSON-text arguments
    assert parse_text('<tool_call>{"name": "f", "parameters": "{\\"a\\": 1}"}') == ToolCall(
        name="f", arguments={"a": 1}, call_id="call_0"
    )


def test_text_call_failures() -> None:
    cut = '<tool_call>{"name": "f", "argu'
    for text, why in [
        (cut, "not valid JSON"),
        ("<tool_call>[1]</tool_call>", "JSON object"),
        ('<tool_call>{"arguments": {}}</tool_call>', "no function name"),
        ('<tool_call>{"name": "f"}</tool_call>' * 2, "2 tool calls"),
    ]:
        action = parse_text(text)
        assert isinstance(action, Invalid) and why in action.error, (text, action)
        assert action.raw == text


def test_replies() -> None:
    assert parse_text("The answer is 4.") == Reply(text="The answer is 4.")
    assert parse_assistant_message({"content": None}).action == Reply(text="")
    thought = '<think>maybe <tool_call>{"name": "f"}</tool_call>?</think>No tool needed.'
    assert parse_text(thought) == Reply(text=thought)
    parsed = parse_assistant_message({"content": '<tool_call>{"name": "f"}</tool_call>'}, "c9")
    assert parsed.action == ToolCall(name="f", call_id="c9")
    disabled = parse_assistant_message({"content": "<tool_call>"}, text_tool_calls=False)
    assert disabled.action == Reply(text="<tool_call>")


def test_capture_levels() -> None:
    lp = {"content": [{"token": "token_id:7", "logprob": -0.5}, {"token": "b", "logprob": -1}]}
    full = {"prompt_token_ids": [1, 2], "choices": [{"token_ids": [7, 8], "logprobs": lp}]}
    assert capture_fields(full) == {
        "capture_level": "tokens",
        "prompt_token_ids": [1, 2],
        "completion_token_ids": [7, 8],
        "logprobs": [-0.5, -1.0],
    }
    only_lp = {"choices": [{"logprobs": lp}]}
    assert capture_fields(only_lp)["capture_level"] == "logprobs"
    assert capture_fields(only_lp)["completion_token_ids"] is None  # "b" is not token_id:N
    as_ids = {"content": [{"token": "token_id:7", "logprob": -0.5}]}
    recovered = capture_fields({"prompt_token_ids": [1], "choices": [{"logprobs": as_ids}]})
    assert recovered["completion_token_ids"] == [7] and recovered["capture_level"] == "tokens"
    assert capture_fields({"choices": [{}]})["capture_level"] == "text"
    bad = {"prompt_token_ids": [1.5], "choices": [{"token_ids": [True], "logprobs": None}]}
    assert capture_fields(bad)["capture_level"] == "text"
    nan = {"content": [{"token": "a", "logprob": float("-inf")}]}
    assert capture_fields({"choices": [{"logprobs": nan}]})["logprobs"] is None


# ---- fuzz: never raises, always one action --------------------------------------------
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=20,
)
FRAGMENTS = ["<tool_call>", "</tool_call>", "<think>", "</think>", '{"name": "f"', "{", "}"]
FRAGMENTS += [", ", '"arguments": ', "[", "]", '"', "\\ud800", "NaN", "1e999", '{"a": 1}}']
fragments = st.sampled_from(FRAGMENTS)
texts = st.lists(fragments | st.text(max_size=10), max_size=12).map("".join)


@examples(400)
def test_fuzz_text_never_raises(examples: int) -> None:
    @settings(max_examples=examples, deadline=None)
    @given(texts)
    def check(text: str) -> None:
        action = parse_text(text)
        assert isinstance(action, ToolCall | Reply | Invalid)
        json.dumps(action.model_dump(mode="json"))

    check()


@examples(400)
def test_fuzz_message_never_raises(examples: int) -> None:
    @settings(max_examples=examples, deadline=None)
    @given(
        content=st.none() | texts,
        calls=st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "id": st.none() | st.text(max_size=5) | st.integers(),
                    "type": st.sampled_from(["function", "custom", None]),
                    "function": st.fixed_dictionaries(
                        {},
                        optional={
                            "name": st.none() | st.text(max_size=5) | st.integers(),
                            "arguments": texts | json_values.map(json.dumps) | json_values,
                        },
                    )
                    | json_values,
                },
            )
            | json_values,
            max_size=3,
        ),
    )
    def check(content: Any, calls: list[Any]) -> None:
        parsed = parse_assistant_message({"content": content, "tool_calls": calls})
        assert isinstance(parsed.action, ToolCall | Reply | Invalid)
        assert parsed.assistant_message["role"] == "assistant"
        json.dumps(parsed.action.model_dump(mode="json"))

    check()


@examples(200)
def test_fuzz_any_message_shape(examples: int) -> None:
    @settings(max_examples=examples, deadline=None)
    @given(json_values)
    def check(message: Any) -> None:
        parsed = parse_assistant_message(message)
        assert isinstance(parsed.action, ToolCall | Reply | Invalid)

    check()
