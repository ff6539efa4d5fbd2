"""The boundary models every episode builds, made as validation makes them.

A single-turn episode builds two ``Observation``s (the reset's and the step's) and a
``Reply`` (the policy's answer): about 2 us each through the validating constructors, a
third of that here (its user ``Message`` is made so by ``Message``'s own constructor:
``core.built.exact_init``). Each builder takes the fields the hot caller
passes; given values exactly of their declared types it builds the model as validation
builds it (``gymforge.core.built``: the fields in their order, the same fields set, text
scrubbed by ``scrub_text`` as the models' own validator scrubs it, each dict a copy) and
otherwise hands the values to the constructor, which validates (or refuses) them.
``tests/kit/test_made.py`` holds each equal to its constructor, hostile values included.
"""

from __future__ import annotations

from typing import Any

from gymforge.core.built import built, str_keyed
from gymforge.core.types import JSON, Message, Observation, Reply, scrub_text

_REPLY_SET = frozenset({"text"})
_OBSERVATION_SET = frozenset(Observation.model_fields)
_JUST_MESSAGES = frozenset({Message})


def reply_of(text: str) -> Reply:
    """``Reply(text=text)``."""
    if type(text) is str:
        return built(Reply, {"kind": "reply", "text": scrub_text(text)}, set(_REPLY_SET))
    return Reply(text=text)


def observation_of(
    messages: tuple[Message, ...],
    data: dict[str, JSON],
    tools: tuple[dict[str, JSON], ...],
    tokens: int,
    tokenizer: str,
    tokens_exact: bool,
) -> Observation:
    """``Observation(messages=..., data=..., tools=..., tokens=..., tokenizer=...,
    tokens_exact=...)``: messages that are ``Message``s themselves are kept (validation keeps
    a model instance as it is), ``data`` and each tool copied."""
    if (
        type(messages) is tuple
        and set(map(type, messages)) <= _JUST_MESSAGES  # ``Message``s themselves
        and str_keyed(data)
        and type(tools) is tuple
        and (not tools or all(str_keyed(t) for t in tools))
        and type(tokens) is int
        and type(tokenizer) is str
        and type(tokens_exact) is bool
    ):
        fields: dict[str, Any] = {
            "messages": messages,
            "data": dict(data),
            "tools": tuple(dict(t) for t in tools) if tools else (),
            "tokens": tokens,
            "tokenizer": tokenizer,
            "tokens_exact": tokens_exact,
        }
        return built(Observation, fields, set(_OBSERVATION_SET))
    return Observation(
        messages=messages,
        data=data,
        tools=tools,
        tokens=tokens,
        tokenizer=tokenizer,
        tokens_exact=tokens_exact,
    )
