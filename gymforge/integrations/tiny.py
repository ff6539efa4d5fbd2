"""Tiny models for CPU baselines and tests: nothing is downloaded.

- :func:`char_tokenizer`: a character-level ``tokenizers`` WordLevel model trained in memory
  on the given texts (every character one token, so each digit is one token), wrapped in
  ``PreTrainedTokenizerFast`` with ``<pad>``, ``<eos>``, ``<unk>`` and ``<bos>``, left
  padding, and a plain chat template (message contents joined by blank lines);
- :func:`tiny_llama`: a randomly initialised ``LlamaForCausalLM`` sized for that vocabulary.

Needs ``tokenizers``, torch and transformers (``pip install 'gymforge[train]'``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

SPECIAL_TOKENS = ("<pad>", "<eos>", "<unk>", "<bos>")
CHAT_TEMPLATE = (
    "{% for m in messages %}{% if not loop.first %}\n\n{% endif %}{{ m['content'] }}"
    "{% if m['role'] == 'assistant' %}<eos>{% endif %}{% endfor %}"
)


def char_tokenizer(texts: Iterable[str]) -> Any:
    """A character-level tokenizer trained on ``texts``; see the module docstring."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    tok.decoder = decoders.Fuse()
    trainer = trainers.WordLevelTrainer(special_tokens=list(SPECIAL_TOKENS))
    tok.train_from_iterator(list(texts), trainer)
    hf = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]  # transformers: untyped __init__
        tokenizer_object=tok,
        pad_token="<pad>",
        eos_token="<eos>",
        unk_token="<unk>",
        bos_token="<bos>",
    )
    hf.padding_side = "left"
    hf.chat_template = CHAT_TEMPLATE
    return hf


def tiny_llama(
    tokenizer: Any,
    *,
    hidden_size: int = 64,
    intermediate_size: int = 128,
    layers: int = 2,
    heads: int = 4,
    max_positions: int = 128,
    seed: int = 0,
) -> Any:
    """A random-init ``LlamaForCausalLM`` for ``tokenizer`` (seeded with ``seed``)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=intermediate_size,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=max_positions,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.bos_token_id,
        tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    return LlamaForCausalLM(config)
