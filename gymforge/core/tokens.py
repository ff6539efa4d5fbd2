"""Pluggable token counting for observations and budgets.

``ApproxTokenCounter`` is the default when no tokenizer is configured. It is an
approximation and says so: its name is ``approx:utf8/4`` and observations it counts carry
``tokens_exact=False``. The rule is ``ceil(utf8_bytes / 4) + 4`` per message (the +4 stands
for the role and separator tokens of common chat templates). English prose under BPE
tokenizers averages about four bytes per token, so expect errors of tens of percent on code,
numbers or non-Latin scripts. Configure a real tokenizer whenever budgets must be exact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

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


class HFTokenCounter:
    """Exact counts from a ``tokenizers.Tokenizer`` or a transformers tokenizer.

    With a transformers tokenizer that has a chat template, messages are counted through
    ``apply_chat_template``; otherwise each message's content is encoded on its own.
    """

    exact = True

    def __init__(self, tokenizer: Any, name: str | None = None) -> None:
        self._tok = tokenizer
        self.name = "hf:" + (name or str(getattr(tokenizer, "name_or_path", "")) or "tokenizer")
        self._chat = bool(getattr(tokenizer, "chat_template", None))

    def count_text(self, text: str) -> int:
        """Tokens of ``text`` alone: no BOS/EOS or other special tokens."""
        encoded = self._tok.encode(text, add_special_tokens=False)
        return len(getattr(encoded, "ids", encoded))

    def count(self, messages: Sequence[Message]) -> int:
        if self._chat:
            dicts = [{"role": m.role, "content": m.content} for m in messages]
            ids = self._tok.apply_chat_template(dicts, tokenize=True, return_dict=False)
            if isinstance(ids, Mapping):  # tokenizers that ignore return_dict=False
                ids = ids["input_ids"]
            return len(ids)
        return sum(self.count_text(m.content) for m in messages)
