"""The sampling and token-in flags of ``run``, ``eval`` and ``calibrate``, defined once.

``--max-tokens``, ``--temperature`` and ``--top-p`` set the request of ``openai:`` and
``vllm:`` policies (unset flags leave the policy's defaults); ``--tokenizer`` and
``--tool-format`` are ``vllm:`` options. Scripted policies ignore them all.
"""

from __future__ import annotations

from typing import Any

import typer

MAX_TOKENS = typer.Option(None, "--max-tokens", min=1, help="Max new tokens per model turn.")
TEMPERATURE = typer.Option(None, "--temperature", min=0.0, help="Sampling temperature.")
TOP_P = typer.Option(None, "--top-p", min=0.0, max=1.0, help="Nucleus sampling top-p.")
TOKENIZER = typer.Option(
    None,
    "--tokenizer",
    help="vllm: policies: render the chat template with this local tokenizer (transformers) "
    "instead of the server's /tokenize.",
)
TOOL_FORMAT = typer.Option(
    None, "--tool-format", help="vllm: policies: hermes, llama3_json or none (default: detect)."
)


def policy_options(
    max_tokens: int | None,
    temperature: float | None,
    top_p: float | None,
    tokenizer: str | None,
    tool_format: str | None,
) -> dict[str, Any]:
    """The set flags as policy settings (``resolve_policy`` keyword options)."""
    options = {
        "max_tokens": max_tokens,
        "temperature": temperature,
        "top_p": top_p,
        "tokenizer": tokenizer,
        "tool_format": tool_format,
    }
    return {k: v for k, v in options.items() if v is not None}
