"""Pluggable token counting for observations and budgets.

``ApproxTokenCounter`` is the default when no tokenizer is configured. It is an
approximation and says so: its name is ``approx:utf8/4`` and observations it counts carry
``tokens_exact=False``. The rule is ``ceil(utf8_bytes / 4) + 4`` per message (the +4 stands
for the role and separator tokens of common chat templates). English prose under BPE
tokenizers averages about four bytes per token, so expect errors of tens of percent on code,
numbers or non-Latin scripts. Configure a real tokenizer whenever budgets must be exact:
``gymforge.integrations.hf_tokens.HFTokenCounter`` (a tokenizer's own counts) is one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from gymforge.core.types import Message


class TokenCounter(Protocol):
    """Counts the tokens of chat messages. ``exact`` is False for approximations."""

    name: str
    exact: bool

    def count(self, messages: Sequence[Message]) -> int: ...

    def count_text(self, text: str) -> int: ...


class ApproxTokenCounter:
    """The documented approximation: ``ceil(utf8_bytes / 4) + 4`` per message."""

    name = "approx:utf8/4"
    exact = False
    per_message = 4

    def count_text(self, text: str) -> int:
        return -(-len(text.encode("utf-8")) // 4)

    def count(self, messages: Sequence[Message]) -> int:
        return sum(self.count_text(m.content) + self.per_message for m in messages)
