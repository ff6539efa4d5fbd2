"""``HFTokenCounter``: exact token counts from a Hugging Face tokenizer, a ``TokenCounter``.

Pass one to an environment (``token_counter=HFTokenCounter(tokenizer)``) whenever its token
budgets must be exact; without one, environments count with the documented approximation
(``gymforge.core.tokens.ApproxTokenCounter``). It takes a ``tokenizers.Tokenizer`` or a
transformers tokenizer that the caller has loaded; gymforge imports neither.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gymforge.core.types import Message


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
