"""What of a step's ``info`` a server shows its client: the one redaction point.

A verdict's facts are written by verifiers for the operator (analysis, hacks, reports), and
many of them reveal the answer: the math verifier's ``gold``, the code judge's per-test
``cases`` (inputs and expected outputs), support-desk's ``expected_codes``, the findings of
state verifiers ("account 7 was not updated"). A client of a served environment may be the
very agent being evaluated; whatever one of its sessions is shown, all of them know.

So a server started without ``--qa-hooks`` shows only what is on the lists below, and
**fails closed**: a key that is not listed (a new verifier's ``reference_answer``, a new
info entry) is withheld, as is a listed key whose value is not of its declared type (a
count that turned into a list of rows). Listing a key is a review decision: it means "this
value never carries or narrows down the answer". Withheld keys are named, never shown, in
``info["withheld"]`` (``"verdict.facts.gold"``), so a client can tell a redacted record
from a bare one. With ``--qa-hooks`` (a server only trusted QA reaches) ``info`` passes
whole. Every path that sends a step's outcome (the WebSocket ``step_result``, the MCP
tool result) calls ``public_info``; server-side records keep the full ``info``.
"""

from __future__ import annotations

import re
from typing import Any

WITHHELD = "withheld"
"""The ``info`` key naming what was withheld (``verdict.facts.gold``, ``info.hint``)."""

_CODE = re.compile(r"[a-z][a-z0-9_]{0,47}")
"""A machine-readable reason code (``wrong_answer``), the only string a reason may be."""
_VERIFIER_ID = re.compile(r"[A-Za-z0-9_.@:+-]{1,80}")

PUBLIC_FACTS: dict[str, type] = {
    # counts of what the answer got right or did, never of what the truth holds
    "tests_run": int,
    "tests_passed": int,
    "timeouts": int,
    "crashes": int,
    "unserialisable": int,
    "hidden_passed": int,
    "hidden_total": int,
    "visible_test_runs": int,
    "diff_lines": int,
    "targets": int,
    "correct": int,
    "reports": int,
    "questions": int,
    "fixtures": int,
    "rows": int,
    "columns": int,
    "other_answers": int,
    "reasoning_boxes_ignored": int,
    "reply_chars": int,
    "made": int,
    "changed_rows": int,
    "rows_changed": int,
    "fields_correct": int,
    # yes/no facts about the answer's form or the judging itself
    "form_ok": bool,
    "is_number": bool,
    "trainable": bool,
    "submitted": bool,
    "clarified": bool,
    "tampered_during_run": bool,
    "agent_files_read_only": bool,
    "visible_tests_run": bool,
}
"""Verdict facts a client may see, with the exact type their value must have (``bool`` is
not an ``int`` here). Deliberately absent: anything about the truth's size or content
(``gold``, ``gold_rows``, ``expected``, ``expected_codes``, ``cases``, ``findings``,
``detail``, ``error``), even counts of it."""

PUBLIC_INFO: dict[str, type | None] = {
    "end_reason": str,
    "success": bool,
    "verifier_error": bool,
    "malformed": str,  # the parse error of the client's own action
    "fault": str,  # the injected fault the client's tool call hit
    "tool_result": None,  # the client's own tool call's result (its observation says as much)
}
"""``info`` entries a client may see (None: any value); ``verdict`` is redacted apart."""


def public_info(info: dict[str, Any], reveal: bool) -> dict[str, Any]:
    """``info`` as a client may see it: whole when ``reveal`` (QA hooks on), else only the
    listed entries and verdict facts, with ``info["withheld"]`` naming the rest (absent when
    nothing was withheld). Never mutates ``info``."""
    if reveal:
        return info
    out: dict[str, Any] = {}
    withheld: list[str] = []
    for key, value in info.items():
        if key == "verdict" and isinstance(value, dict):
            out[key] = _public_verdict(value, withheld)
        elif key in PUBLIC_INFO and _fits(value, PUBLIC_INFO[key]):
            out[key] = value
        else:
            withheld.append(f"info.{key}")
    if withheld:
        out[WITHHELD] = sorted(withheld)
    return out


def _public_verdict(verdict: dict[str, Any], withheld: list[str]) -> dict[str, Any]:
    """The verdict's public part; it still validates as a ``Verdict`` (withheld fields take
    their defaults)."""
    out: dict[str, Any] = {"passed": verdict.get("passed") is True}
    score = verdict.get("score")
    if score is None or (type(score) in (int, float) and 0 <= score <= 1):
        out["score"] = score
    reason = verdict.get("reason")
    if reason is None or (isinstance(reason, str) and _CODE.fullmatch(reason)):
        out["reason"] = reason
    verifier = verdict.get("verifier")
    if isinstance(verifier, str) and _VERIFIER_ID.fullmatch(verifier):
        out["verifier"] = verifier
    facts: dict[str, Any] = {}
    raw = verdict.get("facts")
    for key, value in raw.items() if isinstance(raw, dict) else ():
        if key in PUBLIC_FACTS and _fits(value, PUBLIC_FACTS[key]):
            facts[key] = value
        else:
            withheld.append(f"verdict.facts.{key}")
    out["facts"] = facts
    withheld.extend(f"verdict.{k}" for k in verdict if k not in out)
    return out


def _fits(value: Any, kind: type | None) -> bool:
    return kind is None or type(value) is kind
