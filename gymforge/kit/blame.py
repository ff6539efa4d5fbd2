"""Whose fault a model's failure on a request holding the agent's text is: the rule lives in
:mod:`gymforge.core.blame` (below every layer, so a judge in ``gymforge.verify`` applies it
too); this module keeps its names where the simulated users, the policy's server and the
harness proxy import them."""

from __future__ import annotations

from gymforge.core.blame import (
    FAILED,
    RATE_LIMITED,
    REFUSED,
    TIMED_OUT,
    TextFault,
    blame_failure,
    blame_text,
    server_fault,
    text_fault,
)

__all__ = [
    "FAILED",
    "RATE_LIMITED",
    "REFUSED",
    "TIMED_OUT",
    "TextFault",
    "blame_failure",
    "blame_text",
    "server_fault",
    "text_fault",
]
