"""What an inference server returned for one policy turn, and the record a step keeps of it.

``core.PolicyTurn`` is the contract: the action, how much was captured, the text. A model
policy returns a :class:`CapturedTurn`, which adds the capture verbatim (token ids, logprobs,
the finish reason, the model and its weight version, a harness's own model requests);
:func:`turn_record` turns either into the ``policy`` field of a step record
(``trajectory.schema.PolicyRecord``), with the same keys for every turn.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from gymforge.core.built import dataclass_made
from gymforge.core.policy import PolicyTurn


@dataclass(frozen=True)
class CapturedTurn(PolicyTurn):
    """A model turn: the action plus whatever the inference server returned, verbatim."""

    tool_calls: list[Any] | None = None
    tool_format: str | None = None  # how ``text`` was parsed into ``action`` (token-in policies)
    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    finish_reason: str | None = None
    model: str | None = None
    weight_version: str | None = None
    model_turns: list[dict[str, Any]] | None = None
    """Every model request behind this action when the policy is an outside harness that
    made its own requests (through ``gymforge proxy``): each with its ``branch`` and exact
    ids. The top-level id fields are then None and exports read these instead."""


_CAPTURED_FIELDS = (
    *("action", "capture_level", "text", "tool_calls", "tool_format", "prompt_token_ids"),
    *("completion_token_ids", "logprobs", "finish_reason", "model", "weight_version"),
    "model_turns",
)
_MADE = tuple(f.name for f in fields(CapturedTurn)) == _CAPTURED_FIELDS and not hasattr(
    CapturedTurn, "__post_init__"
)
"""Whether ``CapturedTurn`` has the fields :func:`captured_turn` makes (else it calls the
constructor)."""


def captured_turn(
    action: Any,
    capture_level: Any,
    text: str | None,
    tool_calls: list[Any] | None,
    ids: tuple[list[int] | None, list[int] | None, list[float] | None],
    finish_reason: str | None,
    model: str | None,
    weight_version: str | None,
) -> CapturedTurn:
    """``CapturedTurn(action, capture_level, text, tool_calls=..., prompt_token_ids=...,
    completion_token_ids=..., logprobs=..., finish_reason=..., model=..., weight_version=...)``
    (``ids`` the prompt's and the completion's token ids and the logprobs), made as its
    ``__init__`` makes it (``tests/test_dataclass_made.py``)."""
    prompt_ids, completion_ids, logprobs = ids
    if not _MADE:
        return CapturedTurn(
            action,
            capture_level,
            text,
            tool_calls=tool_calls,
            prompt_token_ids=prompt_ids,
            completion_token_ids=completion_ids,
            logprobs=logprobs,
            finish_reason=finish_reason,
            model=model,
            weight_version=weight_version,
        )
    made = {
        "action": action,
        "capture_level": capture_level,
        "text": text,
        "tool_calls": tool_calls,
        "tool_format": None,
        "prompt_token_ids": prompt_ids,
        "completion_token_ids": completion_ids,
        "logprobs": logprobs,
        "finish_reason": finish_reason,
        "model": model,
        "weight_version": weight_version,
        "model_turns": None,
    }
    return dataclass_made(CapturedTurn, made)


_TURN_FIELDS = frozenset(f.name for f in fields(PolicyTurn))
_UNCAPTURED: dict[str, Any] = {
    f.name: f.default
    for f in fields(CapturedTurn)
    if f.name not in _TURN_FIELDS and f.name != "model_turns"
}
"""The capture fields of a turn that captured nothing, at their defaults, in field order
(``model_turns``, None, is left out as :func:`turn_record` leaves it out)."""


def turn_record(turn: PolicyTurn) -> dict[str, Any]:
    """The ``policy`` field of a step record: every capture field (None where the turn
    captured nothing, as a scripted turn), ``model_turns`` only when the turn has them.
    A plain ``PolicyTurn`` is answered without building its ``CapturedTurn``
    (tests/rollout/test_episode_fast_paths.py holds the two equal, key order included)."""
    if type(turn) is PolicyTurn:
        return {"capture_level": turn.capture_level, "text": turn.text, **_UNCAPTURED}
    if not isinstance(turn, CapturedTurn):
        turn = CapturedTurn(turn.action, turn.capture_level, turn.text)
    out = {k: v for k, v in turn.__dict__.items() if k != "action"}
    if out["model_turns"] is None:
        del out["model_turns"]  # records of every other policy stay as they were
    return out
