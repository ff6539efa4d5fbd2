"""Numbers in a server's reply that JSON can spell but a record cannot hold: an integer
past the largest float (``10**400``), NaN and infinities (``jiter`` decodes those), bools
where numbers belong. Each is a field recorded as None, as every other malformed capture
field is (``parsing.capture_fields``), never an OverflowError out of the policy's turn nor a
record the trajectory writer refuses (which stops the run)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gymforge.core.seeding import canonical_json
from gymforge.rollout.capture import turn_record
from gymforge.rollout.chat_reply import turn_from_response
from gymforge.rollout.completion_reply import checked_ids, sampled_logprobs
from gymforge.rollout.parsing import capture_fields
from gymforge.rollout.server import decode_json
from gymforge.rollout.tokenize_endpoint import TokenInUnsupported
from tests.budget import examples

HUGE = ["1" + "0" * 400, "-1" + "0" * 400, "1e400", "-1e400", "NaN", "Infinity", "-Infinity"]
NUMBER_TEXT = st.one_of(
    st.sampled_from([*HUGE, "true", "false", "null", '"x"', "-0.5", "-1", "0", "-1e-320"]),
    st.integers().map(str),
    st.integers(-(10**330), 10**330).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
)


def chat_body(logprobs: list[str]) -> bytes:
    """A chat-completion reply whose logprob values are these JSON texts verbatim."""
    entries = ",".join(f'{{"token":"t","logprob":{v}}}' for v in logprobs)
    return (
        '{"model":"m","prompt_token_ids":[1,2],"choices":[{"finish_reason":"stop",'
        '"token_ids":[3],"message":{"role":"assistant","content":"hi"},'
        f'"logprobs":{{"content":[{entries}]}}}}]}}'
    ).encode()


def completion_choice(logprobs: list[str]) -> dict[str, Any]:
    """A completions reply's choice (the vLLM policy's path) with these logprob texts."""
    data = decode_json(
        f'{{"choices":[{{"text":"hi","logprobs":{{"token_logprobs":[{",".join(logprobs)}]}}}}]}}'.encode()
    )
    choice: dict[str, Any] = data["choices"][0]
    return choice


def test_a_huge_integer_logprob_is_not_captured() -> None:
    for huge in HUGE[:2]:
        data = decode_json(chat_body([huge, "-0.5"]))
        turn, _ = turn_from_response(data, None)
        assert turn.logprobs is None and turn.capture_level == "tokens"
        assert capture_fields(data)["logprobs"] is None
        assert sampled_logprobs(completion_choice([huge, "-0.5"])) is None


def test_not_finite_completion_logprobs_are_not_captured() -> None:
    for bad in HUGE[2:]:
        assert sampled_logprobs(completion_choice([bad, "-0.5"])) is None


def test_integer_logprobs_within_range_are_floats() -> None:
    data = decode_json(chat_body(["-1", "-0.5"]))
    assert turn_from_response(data, None)[0].logprobs == [-1.0, -0.5]
    assert sampled_logprobs(completion_choice(["-1", "-0.5"])) == [-1.0, -0.5]


@examples(300)
def test_any_logprob_numbers_make_a_recordable_turn(examples: int) -> None:
    @settings(max_examples=examples, deadline=None)
    @given(st.lists(NUMBER_TEXT, max_size=6))
    def check(values: list[str]) -> None:
        data = decode_json(chat_body(values))
        turn, _ = turn_from_response(data, "w1")
        canonical_json(turn_record(turn))  # strict JSON: what the writer needs
        choice = completion_choice(values)
        got = sampled_logprobs(choice)
        if got is not None:
            canonical_json(got)
            assert all(type(v) is float for v in got)
            assert got == [float(v) for v in choice["logprobs"]["token_logprobs"]]
        json.dumps(capture_fields(data), allow_nan=False)

    check()


def test_completion_token_ids_that_are_not_ints_are_refused() -> None:
    """The vLLM policy's ids become the next prompt and the record: a server sending bools,
    floats or text there is refused by name (they made the writer refuse the step)."""
    for ids in ("[true,5]", "[5.0]", '["5"]', "[null]"):
        choice = decode_json(f'{{"prompt_token_ids":[1],"token_ids":{ids}}}'.encode())
        with pytest.raises(TokenInUnsupported, match="not integers"):
            checked_ids(choice, [1], "srv")
    assert checked_ids({"prompt_token_ids": [1], "token_ids": [7, 8]}, [1], "srv") == [7, 8]
