"""Tiny chat tokenizers trained in memory, and ledger transcripts to train them on.

:func:`chat_tokenizer` trains a byte-level BPE (``tokenizers``) on the given texts, adds the
chat style's special and added tokens (:mod:`gymforge.testing.templates`) and wraps it in
``PreTrainedTokenizerFast`` with that style's chat template, end-of-turn token as EOS and a
pad token. Nothing is downloaded, so tests and the engine target can build a real tokenizer
with a real tool-calling template on any machine. :func:`ledger_transcripts` plays the
``ledger`` oracle and returns each episode as OpenAI chat messages plus its tools.

Needs ``tokenizers`` and ``transformers`` (``pip install 'gymforge[train]'``); no torch.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from typing import Any

from gymforge.testing.templates import ADDED_TOKENS, BOS, PAD, SPECIAL_TOKENS, TEMPLATES

Transcript = tuple[list[dict[str, Any]], list[dict[str, Any]]]
"""OpenAI chat messages and the tools of one episode."""


def chat_tokenizer(style: str, texts: Iterable[str], vocab_size: int = 1024) -> Any:
    """A byte-level BPE tokenizer for chat ``style`` (``chatml`` or ``llama3``)."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    if style not in TEMPLATES:
        raise ValueError(f"unknown chat style {style!r}; known: {sorted(TEMPLATES)}")
    specials = list(SPECIAL_TOKENS[style])
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(list(texts), trainer)
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in ADDED_TOKENS[style]])
    hf = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=tok,
        eos_token=specials[0],
        pad_token=PAD[style],
        bos_token=BOS[style],
    )
    hf.chat_template = TEMPLATES[style]
    return hf


def render_call(style: str, name: str, arguments: dict[str, Any]) -> str:
    """The text a model of ``style`` emits for one tool call."""
    args = json.dumps(arguments, ensure_ascii=False)
    if style == "llama3":
        return f'{{"name": "{name}", "parameters": {args}}}'
    return f'<tool_call>\n{{"name": "{name}", "arguments": {args}}}\n</tool_call>'


def ledger_transcripts(n: int, style: str = "chatml", seed: int = 0) -> list[Transcript]:
    """``n`` ledger oracle episodes (training split) as chat messages; assistant tool calls
    are written as the text ``style``'s models emit (content, no structured calls)."""
    from gymforge.envs.ledger import LedgerEnv

    async def play(task_id: str, k: int) -> Transcript:
        env = LedgerEnv()
        try:
            obs = await env.reset(task_id, k)
            tools = [dict(t) for t in obs.tools]
            messages = [_message(m) for m in obs.messages]
            for _ in range(64):
                action = await env.oracle_action()
                if action.kind == "tool_call":
                    text = render_call(style, action.name, dict(action.arguments))
                else:
                    text = getattr(action, "text", "")
                messages.append({"role": "assistant", "content": text})
                result = await env.step(action)
                messages += [_message(m) for m in result.observation.messages]
                if result.terminated or result.truncated:
                    break
            return messages, tools
        finally:
            await env.close()

    async def all_of() -> list[Transcript]:
        ids = LedgerEnv().tasks.sample(n, seed, "train")
        return [await play(t, k) for k, t in enumerate(ids)]

    return asyncio.run(all_of())


def _message(m: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.role == "tool":
        out["tool_call_id"] = m.tool_call_id or ""
    return out
