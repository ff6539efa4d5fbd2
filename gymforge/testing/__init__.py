"""Test helpers that ship with gymforge: a local OpenAI-compatible server for policy tests,
tiny chat tokenizers (``tiny_chat``, ``templates``) and the real-engine parts (``engine``).

Names are imported lazily, so ``python -m gymforge.testing.openai_server`` runs cleanly and
importing this package does not import aiohttp until a server is wanted.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gymforge.testing.openai_server import (
        EOS,
        FORCED_TOKENS,
        OpenAITestServer,
        ServedError,
        ServedReply,
        ServedToolCall,
        echo_responder,
        fake_detokenize,
        fake_logprob,
        fake_tokenize,
        forced_tokenize,
        parse_prompt,
        render_completion,
        render_prompt,
        scripted_responder,
    )

__all__ = [
    "EOS",
    "FORCED_TOKENS",
    "OpenAITestServer",
    "ServedError",
    "ServedReply",
    "ServedToolCall",
    "echo_responder",
    "fake_detokenize",
    "fake_logprob",
    "fake_tokenize",
    "forced_tokenize",
    "parse_prompt",
    "render_completion",
    "render_prompt",
    "scripted_responder",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("gymforge.testing.openai_server"), name)
    raise AttributeError(f"module 'gymforge.testing' has no attribute {name!r}")
