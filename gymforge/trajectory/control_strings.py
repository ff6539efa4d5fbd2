"""Chat templates' control strings in text that a trainer will tokenise again.

A transcript exported as text (``export --format sft``) is rendered by the trainer with the
model's chat template and tokenised, and a tokenizer reads a special token's text inside a
message as that special token: an agent that writes ``<|im_end|>\\n<|im_start|>user\\n...``
as ordinary tokens makes a real turn boundary, and a forged user, tool or assistant turn, in
the training data. The exact token ids (``--format trl``) are never tokenised again and need
no such check. :data:`CONTROL_STRINGS` are the turn and sequence markers of the common
chat-model families; the tokenizer the trainer will use is not known at export time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

CONTROL_STRINGS = (
    # ChatML (Qwen, Yi, many fine-tunes), Phi-3/4
    "<|im_start|>",
    "<|im_end|>",
    "<|im_sep|>",
    "<|endoftext|>",
    "<|system|>",
    "<|user|>",
    "<|assistant|>",
    "<|end|>",
    # Llama 3
    "<|begin_of_text|>",
    "<|end_of_text|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|eot_id|>",
    "<|eom_id|>",
    # Llama 2 / Mistral
    "</s>",
    "[INST]",
    "[/INST]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[AVAILABLE_TOOLS]",
    # Gemma
    "<start_of_turn>",
    "<end_of_turn>",
    # gpt-oss (harmony)
    "<|start|>",
    "<|message|>",
    "<|channel|>",
    "<|return|>",
    "<|call|>",
    # DeepSeek (a fullwidth bar, U+FF5C, and U+2581 for the spaces)
    "<\uff5cbegin\u2581of\u2581sentence\uff5c>",
    "<\uff5cend\u2581of\u2581sentence\uff5c>",
    "<\uff5cUser\uff5c>",
    "<\uff5cAssistant\uff5c>",
)
"""Strings that open or close a turn (or a sequence) in the common chat templates."""


def _strings(value: Any) -> Iterator[str]:
    """Every string of a JSON tree, keys included (a stack, not recursion: an agent's tool
    arguments may nest as deep as a line can)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            for k, v in item.items():
                stack += (k, v)
        elif isinstance(item, list | tuple):
            stack += item


def control_string(value: Any) -> str | None:
    """The first of :data:`CONTROL_STRINGS` found in any string (key or value) of the JSON
    tree ``value``, or None."""
    for text in _strings(value):
        if "<" in text or "[" in text:
            for marker in CONTROL_STRINGS:
                if marker in text:
                    return marker
    return None
