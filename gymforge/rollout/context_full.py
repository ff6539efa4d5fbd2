"""Every inference engine's way of saying "the context is full", in one place.

A refusal that means the prompt (plus the asked completion) no longer fits the model's
context ends *that* episode as truncated (``context_length``), never the run. Engines word
it differently; each wording is a row of :data:`WORDINGS`, and :func:`is_context_full` is
the only test of it (:func:`gymforge.rollout.server.call_with_retries` uses it):

- vLLM, prompt exactly as long as the context and no ``max_tokens`` sent: its default is
  clamped to the room left, 0, and the sampling parameters refuse it ("max_tokens must be
  at least 1, got 0");
- vLLM >= 0.10, prompt longer than the context: "This model's maximum context length is N
  tokens. However, your prompt contains at least M input tokens ...";
- vLLM, ``max_tokens`` larger than the room left: "'max_tokens' or 'max_completion_tokens'
  is too large: C. This model's maximum context length is N tokens and your request has M
  input tokens";
- older vLLM and OpenAI: "... you requested T tokens (M in the messages, C in the
  completion)", "your request has M input tokens", "your messages resulted in M tokens";
- OpenAI's error code ``context_length_exceeded`` (:data:`CODES`), whatever the message;
- ``413 Request Entity Too Large``, whatever the message (:data:`TOO_LARGE`): a body limit
  in front of the server (a gateway's, ``gymforge proxy --max-body-bytes``) is a context
  limit in bytes, and what outgrows it is the transcript, the policy's own output among it
  (tests/redteam/test_policy_transcript_too_large.py);
- OpenAI's 429 "Request too large for MODEL ... on tokens per min (TPM): Limit L, Requested
  R" (:data:`OVER_BUDGET`): one request asking more than a minute's whole token budget,
  which no wait makes room for, unlike the 429s of load ("Rate limit reached ... Please try
  again in ...") that are retried: a context limit in tokens per minute
  (tests/redteam/test_policy_request_too_large_429.py).

:func:`room` reads how many tokens a completion may still have from such a message (the
context length minus the prompt's tokens), so a request that only asked for too many can be
sent again with fewer (:mod:`gymforge.rollout.turn_budget`).
"""

from __future__ import annotations

import re

from gymforge.core.blame import RATE_LIMITED

WORDINGS: tuple[str, ...] = (
    r"max_tokens must be at least 1, got (?:0|-\d+)",
    r"maximum context length",
    r"context[ _]length",
    r"context window",
    r"too many tokens",
    r"prompt contains (?:at least )?\d+ input tokens",
    r"has \d+ input tokens",
    r"resulted in \d+ tokens",
)
"""Regular expressions (case-insensitive) matching a "context is full" refusal."""

CODES = frozenset({"context_length_exceeded"})
"""Error codes that mean the context is full, whatever the message says."""

TOO_LARGE = 413
"""The HTTP status of a request body over the server's (or its gateway's) limit: the
transcript no longer fits, as a full context."""

OVER_BUDGET = re.compile(r"\brequest too large\b", re.I)
"""A 429's message that says the request alone is over the per-minute budget."""

_FULL = re.compile("|".join(f"(?:{w})" for w in WORDINGS), re.I)
# vLLM >= 0.10: "your prompt contains [at least ]N input tokens", "your request has N input
# tokens"; older vLLM and OpenAI: "(N in the messages, ...)", "your messages resulted in N".
_PROMPT_TOKENS = re.compile(
    r"contains (?:at least )?(\d+) input tokens|(\d+) (?:tokens )?in the messages"
    r"|has (\d+) input tokens|resulted in (\d+) tokens"
)
_LIMIT = re.compile(r"maximum context length is (\d+) tokens", re.I)


def is_context_full(status: int, message: str, code: object = None) -> bool:
    """Whether an HTTP ``status`` refusal with ``message`` (and error ``code``) says the
    context is full (a 413 always does, a 429 when the request alone is over the budget:
    module docstring)."""
    if status == TOO_LARGE:
        return True
    if status == RATE_LIMITED:
        return OVER_BUDGET.search(message) is not None
    return status == 400 and (code in CODES or _FULL.search(message) is not None)


def prompt_tokens(message: str) -> int | None:
    """The prompt's token count in a context-length error message, if it states one."""
    m = _PROMPT_TOKENS.search(message)
    return int(next(g for g in m.groups() if g)) if m else None


def context_limit(message: str) -> int | None:
    """The model's context length stated in a refusal, if it states one."""
    m = _LIMIT.search(message)
    return int(m.group(1)) if m else None


def room(message: str) -> int | None:
    """Tokens a completion may still have by a refusal's own figures (the context length
    minus the prompt's tokens; may be <= 0), or None when it does not state both."""
    limit, prompt = context_limit(message), prompt_tokens(message)
    return None if limit is None or prompt is None else limit - prompt
