"""The episode's cheaper record paths, each held equal to the path it stands for: the
fingerprint of an empty state, the dumps of plain-text messages and actions, and a job's
sampling seed written as canonical JSON."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gymforge.core.seeding import derive_seed, fingerprint
from gymforge.core.types import Invalid, Message, Reply, ToolCall
from gymforge.rollout.episode import (
    _PLAIN_TEXT,
    EMPTY_STATE_FINGERPRINT,
    action_record,
    message_record,
    state_fingerprint,
)
from gymforge.rollout.jobs import Job
from tests.budget import examples

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


def test_the_empty_state_fingerprint_is_the_fingerprint_of_an_empty_dict() -> None:
    assert fingerprint({}) == EMPTY_STATE_FINGERPRINT


@given(JSON)
def test_state_fingerprint_is_fingerprint(state: Any) -> None:
    assert state_fingerprint(state) == fingerprint(state)


def test_a_dict_subclass_or_an_empty_list_is_fingerprinted() -> None:
    class Odd(dict[str, Any]):
        pass

    states: tuple[Any, ...] = (Odd(), [], (), "")
    for state in states:
        assert state_fingerprint(state) == fingerprint(state)


def test_the_plain_text_models_have_only_text_fields_and_no_serialisers() -> None:
    for model in _PLAIN_TEXT:
        decorators = model.__pydantic_decorators__
        assert not decorators.field_serializers and not decorators.model_serializers
        assert not model.model_computed_fields
        assert model.model_config.get("extra") == "forbid"
        for name, field in model.model_fields.items():
            assert (
                str(field.annotation)
                .replace("typing.", "")
                .startswith(("<class 'str'>", "str | None", "Literal[", "Optional[str]"))
            ), (model.__name__, name, field.annotation)


TEXT = st.text(st.characters(codec=None), max_size=40)


@examples(300)
def test_message_record_is_model_dump(examples: int) -> None:
    @settings(max_examples=examples)
    @given(
        st.sampled_from(["system", "user", "assistant", "tool"]),
        TEXT,
        st.none() | TEXT,
        st.none() | TEXT,
    )
    def check(role: str, content: str, name: str | None, call_id: str | None) -> None:
        m = Message(role=role, content=content, name=name, tool_call_id=call_id)  # type: ignore[arg-type]
        fast = message_record(m)
        assert fast == m.model_dump() == m.model_dump(mode="json")
        assert list(fast) == list(m.model_dump())
        kept = m.content  # the scrubbed text (a lone surrogate is replaced on construction)
        fast["content"] = "changed"  # a copy: the frozen model is untouched
        assert m.content == kept

    check()


@examples(300)
def test_action_record_is_the_json_dump(examples: int) -> None:
    @settings(max_examples=examples)
    @given(TEXT, TEXT, st.dictionaries(st.text(max_size=5), JSON, max_size=3))
    def check(text: str, error: str, arguments: dict[str, Any]) -> None:
        for action in (
            Reply(text=text),
            Invalid(raw=text, error=error),
            ToolCall(name="t", arguments=arguments, call_id="c"),
        ):
            fast = action_record(action)
            assert fast == action.model_dump(mode="json")
            assert list(fast) == list(action.model_dump(mode="json"))

    check()


def test_a_message_subclass_is_dumped_by_pydantic() -> None:
    class Tagged(Message):
        tag: int = 3

    m = Tagged(role="user", content="x")
    assert message_record(m) == m.model_dump() and "tag" in message_record(m)


@examples(500)
def test_the_sampling_seed_is_derive_seed(examples: int) -> None:
    @settings(max_examples=examples)
    @given(st.text(st.characters(codec=None)), st.integers(), st.integers(min_value=0))
    def check(task_id: str, seed: int, rollout: int) -> None:
        job = Job(0, task_id, seed, rollout)
        try:
            want = derive_seed("sampling", task_id, seed, rollout) % 2**31
        except UnicodeEncodeError:  # a lone surrogate in the id: both refuse it alike
            with pytest.raises(UnicodeEncodeError):
                job.sampling_seed  # noqa: B018
            return
        assert job.sampling_seed == want

    check()


def test_a_bool_seed_takes_the_defining_path() -> None:
    job = Job(0, "t", True, 0)
    assert job.sampling_seed == derive_seed("sampling", "t", True, 0) % 2**31
