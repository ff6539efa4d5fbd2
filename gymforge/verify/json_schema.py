"""``json_schema``: the answer is JSON that validates against a schema and matches ground truth.

Contract (``JsonSchemaVerifier.verify(reply, expected)``):

1. **Extraction** (``answer_block.extract_block``, shared with the SQL verifier).
   Reasoning is dropped first (``<think>`` blocks, text before a stray ``</think>``, text
   after an unclosed ``<think>``). If the visible text holds fenced blocks (```` ```json
   ```` or untagged), the answer is the last one; several blocks with different contents
   are a ``hedge``, and anything but whitespace after the last block is
   ``text_after_answer``. Without a fence, the whole visible text is the answer.
2. **Parsing**, safe on hostile input: at most ``max_chars`` characters and ``max_depth``
   levels of nesting, both checked *before* parsing by a linear scan; duplicate object keys
   (``{"total": 1, "total": 2}``, a hedge), ``NaN``/``Infinity``, non-finite floats and
   integers over 40 digits are refused.
3. **Schema**: JSON Schema Draft 2020-12 (``jsonschema``; ``uniqueItems`` by sorting, never
   pairwise: ``json_unique``). Every violation is a fact
   ``{"path": "/line_items/0/quantity", "message": ...}`` (JSON-pointer path, message cut
   to 200 characters, at most 20 listed; ``violations_total`` counts all).
4. **Field checks** against ``expected`` (the gold record): each ``FieldCheck`` names a
   JSON pointer and a mode: ``exact`` (JSON equality; ``true`` is not ``1``), ``text``
   (NFKC, case and whitespace folded), ``number`` (``abs_tol``/``rel_tol``), ``set``
   (lists compared as sets) or ``length`` (list lengths). ``score`` is the weighted fraction
   of checks that hold; with ``gate_on_schema`` (default) a schema violation scores 0.

``passed`` means: schema valid and every check holds. ``reason`` is one of ``REASONS``.
Facts: ``schema_valid``, ``violations``, ``violations_total``, ``fields_total``,
``fields_correct``, ``mismatches`` (``{"path", "why"}``, at most 50) and ``reason``.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from jsonschema import Draft202012Validator

from gymforge.core.seeding import canonical_json
from gymforge.core.verdict import Verdict
from gymforge.verify.answer_block import extract_block
from gymforge.verify.json_unique import Validator

VERSION = "1.0.0"
VERIFIER_ID = f"json_schema@{VERSION}"
REASONS = frozenset(
    {
        "no_answer",  # nothing outside the reasoning
        "too_long",  # over the character cap
        "too_deep",  # nested deeper than the cap
        "unclosed_block",  # a fence that is never closed
        "hedge",  # several different fenced answers
        "text_after_answer",  # something follows the last fenced block
        "parse_error",  # not JSON (or NaN, huge numbers...)
        "duplicate_key",  # an object names one key twice
        "schema_violation",  # parsed, but the schema rejects it
        "wrong_fields",  # schema-valid, but some field checks fail
    }
)
"""Longest reply scanned at all (before reasoning is stripped)."""
MAX_VIOLATIONS = 20
MAX_MISMATCHES = 50
_MSG_CHARS = 200
_WS = re.compile(r"\s+")

Mode = Literal["exact", "text", "number", "set", "length"]


# ---- safe parsing ------------------------------------------------------------------------
class JsonRefused(ValueError):
    """The payload was refused before or during parsing; ``reason`` is one of ``REASONS``."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(detail or reason)
        self.reason, self.detail = reason, detail


def nesting_depth(text: str) -> int:
    """The deepest ``[``/``{`` nesting of ``text`` outside JSON strings (one linear scan)."""
    depth = deepest = 0
    in_str = escaped = False
    for ch in text:
        if in_str:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise JsonRefused("duplicate_key", f"key {key[:40]!r} appears twice")
        out[key] = value
    return out


def _constant(name: str) -> Any:
    raise JsonRefused("parse_error", f"{name} is not JSON")


def _int(text: str) -> int:
    if len(text.lstrip("-")) > 40:
        raise JsonRefused("parse_error", "an integer over 40 digits")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonRefused("parse_error", "a number too large for a float")
    return value


def parse_json(text: str, max_chars: int = 100_000, max_depth: int = 32) -> Any:
    """``text`` as JSON, or ``JsonRefused``. Size and depth are checked before parsing."""
    if len(text) > max_chars:
        raise JsonRefused("too_long", f"{len(text)} characters > {max_chars}")
    if nesting_depth(text) > max_depth:
        raise JsonRefused("too_deep", f"nested deeper than {max_depth}")
    try:
        return json.loads(
            text,
            object_pairs_hook=_pairs,
            parse_constant=_constant,
            parse_int=_int,
            parse_float=_float,
        )
    except JsonRefused:
        raise
    except (ValueError, RecursionError) as err:
        raise JsonRefused("parse_error", str(err)[:_MSG_CHARS]) from None


# ---- field checks ------------------------------------------------------------------------
_MISSING = object()


def pointer(path: str) -> list[str]:
    """The tokens of JSON pointer ``path`` (``""`` is the whole document)."""
    if path == "":
        return []
    if not path.startswith("/"):
        raise ValueError(f"JSON pointers start with '/': {path!r}")
    return [t.replace("~1", "/").replace("~0", "~") for t in path[1:].split("/")]


def lookup(doc: Any, path: str) -> Any:
    """The value at JSON pointer ``path`` in ``doc``, or the private ``_MISSING`` marker."""
    node = doc
    for token in pointer(path):
        if isinstance(node, dict):
            node = node.get(token, _MISSING)
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return _MISSING
        if node is _MISSING:
            return _MISSING
    return node


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _json_equal(a: Any, b: Any) -> bool:
    """JSON equality on plain decoded data: ``true`` is not ``1``, ``1`` equals ``1.0``."""
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def fold_text(s: str) -> str:
    """NFKC, case-folded, whitespace collapsed: the ``text`` comparison key."""
    return _WS.sub(" ", unicodedata.normalize("NFKC", s).casefold()).strip()


@dataclass(frozen=True)
class FieldCheck:
    """Compare the value at ``path`` (a JSON pointer) with the gold record's value there."""

    path: str
    mode: Mode = "exact"
    abs_tol: float = 0.0
    rel_tol: float = 0.0
    weight: float = 1.0

    def __post_init__(self) -> None:
        pointer(self.path)
        if self.weight <= 0 or self.abs_tol < 0 or self.rel_tol < 0:
            raise ValueError("weight must be > 0 and tolerances >= 0")

    def compare(self, got: Any, want: Any) -> str | None:
        """None if ``got`` matches ``want``, else why not (``missing``, ``wrong``,
        ``wrong_type``)."""
        if got is _MISSING:
            return "missing"
        if self.mode == "exact":
            return None if _json_equal(got, want) else "wrong"
        if self.mode == "text":
            if not isinstance(got, str) or not isinstance(want, str):
                return None if _json_equal(got, want) else "wrong_type"
            return None if fold_text(got) == fold_text(want) else "wrong"
        if self.mode == "number":
            if not _is_number(got) or not _is_number(want):
                return None if got is None and want is None else "wrong_type"
            tol = max(self.abs_tol, self.rel_tol * abs(want))
            return None if abs(got - want) <= tol + 1e-12 else "wrong"
        if not isinstance(got, list) or not isinstance(want, list):
            return "wrong_type"
        if self.mode == "length":
            return None if len(got) == len(want) else "wrong"
        as_set = {canonical_json(_fold_item(v)) for v in got}
        return None if as_set == {canonical_json(_fold_item(v)) for v in want} else "wrong"


def _fold_item(v: Any) -> Any:
    if isinstance(v, str):
        return fold_text(v)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


# ---- the verifier ------------------------------------------------------------------------
class JsonSchemaVerifier:
    """Validate a reply's JSON against ``schema`` and compare ``checks`` with a gold record.

    ``schema`` is checked against the Draft 2020-12 meta-schema at construction (an invalid
    schema is an authoring error: ``jsonschema.SchemaError``). ``format`` keywords are
    asserted (``date``, ``email``...) when ``check_formats`` is set.
    """

    def __init__(
        self,
        schema: Mapping[str, Any],
        checks: Sequence[FieldCheck] = (),
        *,
        gate_on_schema: bool = True,
        check_formats: bool = True,
        max_chars: int = 100_000,
        max_depth: int = 32,
        langs: frozenset[str] = frozenset({"json", ""}),
    ) -> None:
        Draft202012Validator.check_schema(schema)
        fmt = Draft202012Validator.FORMAT_CHECKER if check_formats else None
        self.validator = Validator(dict(schema), format_checker=fmt)
        self.checks = tuple(checks)
        self.gate_on_schema = gate_on_schema
        self.max_chars, self.max_depth, self.langs = max_chars, max_depth, langs

    def verify(
        self, reply: str, expected: Any = None, checks: Sequence[FieldCheck] | None = None
    ) -> Verdict:
        """Judge ``reply``; ``checks`` (default: the instance's) compare with ``expected``."""
        checks = self.checks if checks is None else tuple(checks)
        ex = extract_block(reply, self.langs)
        if ex.text is None:
            return self._fail(ex.reason or "no_answer", len(checks))
        try:
            value = parse_json(ex.text, self.max_chars, self.max_depth)
        except JsonRefused as err:
            return self._fail(err.reason, len(checks), detail=err.detail[:_MSG_CHARS])
        return self.judge_value(value, expected, checks)

    def judge_value(
        self, value: Any, expected: Any = None, checks: Sequence[FieldCheck] | None = None
    ) -> Verdict:
        """The schema and field verdict on an already-parsed ``value``."""
        errors = sorted(
            self.validator.iter_errors(value),
            key=lambda e: (_path(e.absolute_path), e.validator, e.message),
        )
        violations = [
            {"path": _path(e.absolute_path), "message": e.message[:_MSG_CHARS]}
            for e in errors[:MAX_VIOLATIONS]
        ]
        checks = self.checks if checks is None else tuple(checks)
        mismatches: list[dict[str, str]] = []
        total_w = good_w = 0.0
        correct = 0
        for check in checks:
            why = check.compare(lookup(value, check.path), lookup(expected, check.path))
            total_w += check.weight
            if why is None:
                good_w += check.weight
                correct += 1
            elif len(mismatches) < MAX_MISMATCHES:
                mismatches.append({"path": check.path, "why": why})
        valid = not errors
        fraction = good_w / total_w if total_w else 1.0
        score = 0.0 if (self.gate_on_schema and not valid) else fraction
        passed = valid and correct == len(checks)
        reason = None if passed else ("schema_violation" if not valid else "wrong_fields")
        facts = {
            "reason": reason,
            "schema_valid": valid,
            "violations": violations,
            "violations_total": len(errors),
            "fields_total": len(checks),
            "fields_correct": correct,
            "mismatches": mismatches,
        }
        return Verdict(
            passed=passed,
            score=round(min(1.0, max(0.0, score)), 6),
            reason=reason,
            facts=facts,
            verifier=VERIFIER_ID,
        )

    def _fail(self, reason: str, n_checks: int, detail: str = "") -> Verdict:
        facts: dict[str, Any] = {
            "reason": reason,
            "schema_valid": False,
            "fields_total": n_checks,
            "fields_correct": 0,
        }
        if detail:
            facts["detail"] = detail
        return Verdict(passed=False, score=0.0, reason=reason, facts=facts, verifier=VERIFIER_ID)


def _path(parts: Any) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)
