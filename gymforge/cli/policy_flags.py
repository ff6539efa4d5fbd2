"""The sampling and token-in flags of ``run``, ``eval`` and ``calibrate``, defined once.

``--max-tokens``, ``--temperature`` and ``--top-p`` set the request of ``openai:`` and
``vllm:`` policies (unset flags leave the policy's defaults); ``--tokenizer`` and
``--tool-format`` are ``vllm:`` options; ``--harness-time-limit``, ``--harness-grace``,
``--harness-model``, ``--harness-path`` and ``--harness-mode`` are ``harness:``/``harness-cmd:``
options (refused for any other policy).
Scripted policies ignore the sampling flags.
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

HARNESS_TIME_LIMIT = typer.Option(
    None,
    "--harness-time-limit",
    min=0.001,
    help="harness: policies: seconds a harness may run without a final message before the "
    "episode is truncated (harness_timeout; default 600).",
)
HARNESS_GRACE = typer.Option(
    None,
    "--harness-grace",
    min=0.0,
    help="harness: policies: seconds a harness gets to exit once its episode ended (default 5).",
)
HARNESS_MODEL = typer.Option(
    None,
    "--harness-model",
    help="harness: policies: the model name the harness is told to use (default: the first "
    "model the inference server lists).",
)

HARNESS_PATH = typer.Option(
    None,
    "--harness-path",
    help="harness-cmd: policies: a file or directory the confined harness may read (repeat "
    "for more); it also sees its interpreter and the paths its command names.",
)
HARNESS_MODE = typer.Option(
    None,
    "--harness-mode",
    help="harness: policies: tools (default: the environment's tools over MCP) or workspace "
    "(a shell whose commands run in the episode's workspace, each one a step of the "
    "environment's shell tool; docs/harness.md).",
)


def policy_options(
    max_tokens: int | None,
    temperature: float | None,
    top_p: float | None,
    tokenizer: str | None,
    tool_format: str | None,
    harness_time_limit: float | None = None,
    harness_grace: float | None = None,
    harness_model: str | None = None,
    harness_path: list[str] | None = None,
    harness_mode: str | None = None,
) -> dict[str, Any]:
    """The set flags as policy settings (``resolve_policy`` keyword options)."""
    options = {
        "max_tokens": max_tokens,
        "temperature": temperature,
        "top_p": top_p,
        "tokenizer": tokenizer,
        "tool_format": tool_format,
        "wall_clock_s": harness_time_limit,
        "grace_s": harness_grace,
        "model": harness_model,
        "paths": tuple(harness_path) if harness_path else None,
        "mode": harness_mode,
    }
    return {k: v for k, v in options.items() if v is not None}
