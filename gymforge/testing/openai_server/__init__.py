"""A local OpenAI-compatible server for tests and benchmarks (no GPU, no model).

:class:`~gymforge.testing.openai_server.server.OpenAITestServer` (chat completions, token-id
completions, ``/tokenize``, faults) and its fake model
(:mod:`gymforge.testing.openai_server.fake`). ``python -m gymforge.testing.openai_server``
runs one standalone (:func:`main`).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from gymforge.testing.openai_server.fake import (
    CONTEXT_FAULTS,
    EOS,
    FAULTS,
    FORCED_TOKENS,
    VLLM_COMPLETIONS_DEFAULT_MAX_TOKENS,
    Responder,
    ServedError,
    ServedReply,
    ServedToolCall,
    apply_stop,
    context_refusal,
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
from gymforge.testing.openai_server.server import OpenAITestServer

__all__ = [
    "CONTEXT_FAULTS",
    "EOS",
    "FAULTS",
    "FORCED_TOKENS",
    "VLLM_COMPLETIONS_DEFAULT_MAX_TOKENS",
    "OpenAITestServer",
    "Responder",
    "ServedError",
    "ServedReply",
    "ServedToolCall",
    "apply_stop",
    "context_refusal",
    "echo_responder",
    "fake_detokenize",
    "fake_logprob",
    "fake_tokenize",
    "forced_tokenize",
    "main",
    "parse_prompt",
    "render_completion",
    "render_prompt",
    "scripted_responder",
]


def main(argv: Sequence[str] | None = None) -> None:
    """Run a standalone server; prints ``PORT <n>`` and serves until stdin closes. It
    answers with fixed text, or with ``--responder MODULE:FACTORY``'s ``FACTORY(*ARGS)``."""
    ap = argparse.ArgumentParser(description="A local OpenAI-compatible test server.")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--reply-chars", type=int, default=200, help="length of each reply")
    ap.add_argument(
        "--cache-limit",
        type=int,
        default=4096,
        help="distinct requests whose answers are kept (a benchmark: all it sends, so every "
        "client it compares is answered from the cache alike)",
    )
    ap.add_argument("--responder", metavar="MODULE:FACTORY", help="FACTORY(*ARGS) answers")
    ap.add_argument("--responder-arg", metavar="ARG", action="append", default=[], dest="args")
    args = ap.parse_args(argv)
    text = ("The answer is 42. " * (args.reply_chars // 18 + 1))[: args.reply_chars]
    responder: Responder = lambda _req: text  # noqa: E731
    if args.responder:
        module, _, name = args.responder.partition(":")
        responder = getattr(importlib.import_module(module), name)(*args.args)
    server = OpenAITestServer(
        responder,
        latency=args.latency,
        port=args.port,
        record=False,
        cache=True,
        cache_limit=args.cache_limit,
    )
    with server:
        print(f"PORT {server.port}", flush=True)
        sys.stdin.read()
