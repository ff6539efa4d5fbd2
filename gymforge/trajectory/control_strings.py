"""Chat templates' control strings in text that a trainer will tokenise again.

A transcript exported as text (``export --format sft``) is rendered by the trainer with the
model's chat template and tokenised, and a tokenizer reads a special token's text inside a
message as that special token: an agent that writes ``<|im_end|>\\n<|im_start|>user\\n...``
as ordinary tokens makes a real turn boundary, and a forged user, tool or assistant turn, in
the training data. The exact token ids (``--format trl``) are never tokenised again and need
no such check. :data:`CONTROL_STRINGS` are the turn and sequence markers of the common
chat-model families; the tokenizer the trainer will use is not known at export time.

A tokenizer matches a token added with ``normalized=True`` (``add_tokens``' default) on its
normalised text: one that folds compatibility characters (NFKC) and drops format
characters (BERT's cleaning) reads fullwidth ``\uff1c|im_end|\uff1e``, or ``<|im_`` and
``end|>`` around a zero-width space, as ``<|im_end|>``. So a string that is not ASCII is
matched folded too (``wording.plain``), against the markers and their folded forms
(tests/redteam/test_export_sft_control_lookalikes.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gymforge.wording import plain

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
    # Llama 4
    "<|header_start|>",
    "<|header_end|>",
    "<|eot|>",
    # Llama 2 / Mistral (and its later templates' system prompt and tool calls)
    "</s>",
    "[INST]",
    "[/INST]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_CALLS]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    # Command R, Command A
    "<|START_OF_TURN_TOKEN|>",
    "<|END_OF_TURN_TOKEN|>",
    "<|SYSTEM_TOKEN|>",
    "<|USER_TOKEN|>",
    "<|CHATBOT_TOKEN|>",
    "<|START_RESPONSE|>",
    "<|END_RESPONSE|>",
    # Granite
    "<|start_of_role|>",
    "<|end_of_role|>",
    # GLM
    "<|observation|>",
    # Kimi K2 (its turns open with a role marker: no <|im_end|> is needed to forge one)
    "<|im_user|>",
    "<|im_assistant|>",
    "<|im_system|>",
    "<|im_middle|>",
    # OpenChat, Nemotron
    "<|end_of_turn|>",
    "<extra_id_0>",
    "<extra_id_1>",
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
    "<\uff5ctool\u2581calls\u2581begin\uff5c>",
    "<\uff5ctool\u2581call\u2581begin\uff5c>",
    "<\uff5ctool\u2581outputs\u2581begin\uff5c>",
    "<\uff5ctool\u2581output\u2581begin\uff5c>",
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


_MARKERS = CONTROL_STRINGS + tuple(
    dict.fromkeys(f for f in map(plain, CONTROL_STRINGS) if f not in CONTROL_STRINGS)
)
"""The markers and their folded forms (DeepSeek's fullwidth bars fold to ``|``)."""


def control_string(value: Any) -> str | None:
    """The first of :data:`CONTROL_STRINGS` (or its folded form) found in any string (key
    or value) of the JSON tree ``value``, as it is or folded (``wording.plain``), or None."""
    for text in _strings(value):
        if not text.isascii():
            text = f"{text}\n{plain(text)}"  # no marker holds a line break
        if "<" in text or "[" in text:
            for marker in _MARKERS:
                if marker in text:
                    return marker
    return None
