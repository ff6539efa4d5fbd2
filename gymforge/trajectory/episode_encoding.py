"""Sealing an episode: its records validated against the schema and encoded as digest-chained
(and, with a key, keyed-chain sealed) canonical JSON lines.

Each record is validated once: at C speed through the schema's twin where that is proven to
change nothing (``_fast_checked``), else through the schema models (``_checked``), whose
errors and bytes are the ones the writer has always had.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
from pydantic import ValidationError

from gymforge.core.errors import IntegrityError
from gymforge.core.seeding import canonical_json
from gymforge.core.types import not_json
from gymforge.trajectory import fast_json
from gymforge.trajectory.line_encoding import DIGEST_PLACEHOLDER, SEAL_PLACEHOLDER, encode_line
from gymforge.trajectory.same_json import same_json
from gymforge.trajectory.schema import LINE_ADAPTER, AnyLine, PolicyRecord
from gymforge.trajectory.seal import ChainState
from gymforge.trajectory.strict_twin import decoder_for
from gymforge.trajectory.twin import TWIN, lift_numbers, nested_within, shallow_action

_EPISODE_LINES = ("step", "episode")
STRICT: Callable[[dict[str, Any]], msgspec.json.Decoder[Any] | None] | None = decoder_for
"""The strict twin's choice of decoder for a record (None: the pydantic twin for all)."""


def _none_defaults(model: type[PolicyRecord]) -> dict[str, None]:
    """``model``'s fields that default to None and validate an explicit None alike."""
    out: dict[str, None] = {}
    for name, spec in model.model_fields.items():
        if spec.is_required() or spec.default is not None:
            continue
        try:
            model.model_validate({"capture_level": "none", name: None})
        except ValidationError:
            continue
        out[name] = None
    return out


_POLICY_UNSET = _none_defaults(PolicyRecord)
"""A step's policy record fields that default to None: a record that leaves them out
(``model_turns``, of every policy but a harness) validates and dumps as one that sets them
to None, so the text the writer validates can be the line it writes (``same_json``)."""


def seal_episode(records: list[dict[str, Any]]) -> list[str]:
    """Validate ``records`` (steps then the episode record), chain their digests, and return
    the canonical JSON lines. Raises IntegrityError naming the first invalid record.

    Records are serialised to strict JSON *before* validation, so values JSON cannot hold
    (NaN, infinities, sets, objects) are refused rather than quietly turned into ``null`` or
    lists."""
    return seal_lines(records, None, ChainState())


def seal_lines(records: list[dict[str, Any]], key: bytes | None, state: ChainState) -> list[str]:
    """``seal_episode``, also sealing each line with ``key`` (when given) onto the keyed
    chain ``state`` of the file, which is advanced past the episode."""
    lines: list[str] = []
    counted: list[tuple[str, str, str]] = []
    previous = ""
    seal = state.seal  # the keyed chain runs on from the file's last line
    for i, rec in enumerate(records):
        marked = {**rec, "digest": DIGEST_PLACEHOLDER}
        if type(rec.get("policy")) is dict:  # its unset fields, as the validated dump has them
            marked["policy"] = {**_POLICY_UNSET, **rec["policy"]}
        # sealed: the seal's slot is in the text too, so the line can be this text
        slotted = key is not None and "seal" not in rec and rec.get("record") in _EPISODE_LINES
        if slotted:
            marked["seal"] = SEAL_PLACEHOLDER
        checked = _fast_checked(marked, slotted) or _checked(i, rec, marked, slotted)
        text, kind, body, same = checked
        if kind == "run_seal":
            raise IntegrityError(f"record {i}: a run seal is not part of an episode")
        # the validated record is nearly always the record again: then its text is `text`
        full = text if (key is None or slotted) and same else None
        body.pop("seal", None)
        try:
            previous, seal, line = encode_line(previous, body, key, seal, full)
        except ValueError as err:  # validated into what JSON cannot hold: an int past the
            # largest float in a float field became an infinity
            raise IntegrityError(
                f"record {i} of episode {rec.get('episode_id')} is not JSON once validated: "
                f"{_faults(body) or err}"
            ) from err
        lines.append(line)
        if key is not None:
            counted.append((body["record"], body["run_id"], seal))
    if key is not None:  # only once every record sealed: a refused episode leaves no trace
        for kind, run_id, line_seal in counted:
            state.count(kind, run_id, line_seal)
    return lines


_Checked = tuple[str, str, dict[str, Any], bool]
"""A record's canonical text (placeholders in), its kind (``record``), the validated
model's dump (``seal`` only when slotted) and whether the text is the dump's canonical
JSON."""


def _fast_checked(marked: dict[str, Any], slotted: bool) -> _Checked | None:
    """``_checked`` at C speed where that changes nothing, else None (the caller then takes
    ``_checked``, whose errors and bytes are the ones the writer has always had).

    ``marked`` is encoded by orjson and validated by the schema's twin (``twin.TWIN``: the
    same fields and constraints, returning the models' dump as plain dicts, accepting
    nothing the models refuse; a step or episode record by its msgspec twin,
    ``strict_twin``, which is narrower still and returns the same dump), and the dump is
    compared with ``==`` (in C): equal, ``marked`` holds no NaN or infinity (orjson wrote
    ``null``, which parses to nothing equal to either) and no value ``json`` refuses (a
    datetime, a dataclass or a plain enum equals no str or dict; orjson refuses the first
    two, and subclasses of the builtins, whose ``__eq__`` or ``items()`` could lie:
    ``fast_json.PLAIN``), so ``canonical_json(marked)`` would not have raised and the
    record is refused exactly when it always was. The text returned is then the dump's own
    canonical JSON (``fast_canonical`` of a dump, a plain JSON tree): the line the reference
    path writes whenever the dump differs from the record only in what ``==`` cannot see
    (``1`` and ``1.0``, ``0.0`` and ``-0.0``) as well as when it is the record again.

    That text is nearly always the text validated: the dump, encoded with its keys as they
    are (the twin's fields are sorted, and free-form dicts keep the sorted text's order), is
    the sorted text itself exactly when validation converted nothing; the dump is encoded
    with its keys sorted only when it is not.

    A step's token ids and logprobs, when exactly lists of ints and of finite floats, are
    copied out of the record, left out of the text validated and put back into the dump
    (``twin.lift_numbers``): validating them is most of a step's cost, and the twin would
    return them unchanged. The line is then the dump's own text: the record is read once
    (the lists may be a policy's, changed by its thread meanwhile; the line holds what was
    read and validated)."""
    if TWIN is None:
        return None
    lift = lift_numbers(marked)  # exact number lists: the twin would give them back as they are
    rest = marked if lift is None else lift[0]
    rest_raw = fast_json.orjson_bytes(rest)
    if rest_raw is None:
        return None
    strict = STRICT(rest) if STRICT is not None else None  # str values are plain: orjson
    try:  # wrote them; a step or episode record by its msgspec twin (``strict_twin``)
        body: dict[str, Any] = (
            TWIN.validate_json(rest_raw) if strict is None else strict.decode(rest_raw)
        )
    except (ValidationError, msgspec.ValidationError, RecursionError):
        return None
    if not slotted:
        body.pop("seal", None)  # absent unless sealed, as ``_dump`` leaves it
    if body != rest or not shallow_action(body):
        return None
    if strict is not None and not _within_json_depth(body, rest_raw):
        return None  # the models' JSON parser refuses it; msgspec has no depth limit
    if lift is not None:
        body["policy"].update(lift[1])  # in place: the keys keep their order
    elif fast_json.unsorted_bytes(body) == rest_raw:  # keys already sorted at every level
        return fast_json.canonical_text(rest_raw), body["record"], body, True
    text = fast_json.fast_canonical(body)
    return None if text is None else (text, body["record"], body, True)


_JSON_DEPTH = 200
"""The deepest nesting of arrays and objects (the record itself counted) that the models'
JSON parser reads (pydantic's: ``recursion limit exceeded`` past it), and so the pydantic
twin's; the strict twin's (msgspec's) reads deeper (tests/redteam/test_strict_twin_red12.py)."""


def _within_json_depth(body: dict[str, Any], raw: bytes) -> bool:
    """Whether ``body`` (``raw``'s plain dump) is nested no deeper than ``_JSON_DEPTH``:
    at once when ``raw`` opens no more arrays and objects than that, else level by level."""
    if raw.count(b"[") + raw.count(b"{") <= _JSON_DEPTH:
        return True
    return nested_within([body], _JSON_DEPTH)


def _checked(i: int, rec: dict[str, Any], marked: dict[str, Any], slotted: bool) -> _Checked:
    """``marked`` encoded with ``canonical_json`` (strict JSON, before validation, so
    values JSON cannot hold are refused rather than quietly turned into ``null``) and
    validated; IntegrityError names record ``i`` when either fails."""
    try:
        text = canonical_json(marked)
    except (TypeError, ValueError) as err:
        raise IntegrityError(
            f"record {i} of episode {rec.get('episode_id')} is not JSON: {_faults(marked) or err}"
        ) from err
    try:
        model = LINE_ADAPTER.validate_json(text)
    except ValidationError as err:
        raise IntegrityError(
            f"record {i} of episode {rec.get('episode_id')} breaks the "
            f"trajectory schema: {err.errors()[0]['loc']}: "
            f"{err.errors()[0]['msg']}"
        ) from err
    body = _dump(model, slotted)
    return text, body["record"], body, same_json(body, marked)


def _faults(record: dict[str, Any]) -> str:
    """What of ``record`` JSON cannot hold, field by field ("" when nothing is found)."""
    return "; ".join(filter(None, (not_json(v, k) for k, v in record.items())))


def _dump(model: AnyLine, slotted: bool) -> dict[str, Any]:
    body = model.model_dump(mode="json")
    if not slotted:
        body.pop("seal", None)  # absent unless sealed, as in files written before seals
    return body
