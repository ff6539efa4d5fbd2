"""``TransformersPolicy``: a local transformers model as a gymforge ``Policy``, exact tokens.

For CPU baselines, evaluation and tests where no inference server runs. Each turn records
``capture_level="tokens"``: the prompt ids the model was given and the ids it generated,
with their sampling logprobs, so episodes export to TRL rows (``trl_row``) exactly like
those of a vLLM server.

Token context is kept, never re-rendered: the first turn's prompt is the reset messages
rendered (the tokenizer's chat template when ``chat=True``; otherwise the message contents
joined by blank lines, as ``task_dataset(prompt_format="text")`` writes them); each later
turn appends the generated ids and then the new observation messages rendered alone. Every
prompt therefore extends the previous prompt plus completion (prefix-stable by
construction). The completion's text (special tokens skipped) is parsed into an action by
``gymforge.rollout.parsing.parse_text``.

Sampling is seeded from ``EpisodeContext.sampling_seed``; ``temperature=0`` is greedy.
Needs torch and transformers (``pip install 'gymforge[train]'``).
"""

from __future__ import annotations

from typing import Any

from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.core.types import Observation
from gymforge.rollout.capture import CapturedTurn
from gymforge.rollout.parsing import parse_text


class TransformersPolicyFactory:
    """Makes :class:`TransformersPolicy` objects sharing one model and tokenizer.

    ``weight_version`` is stamped on every turn (set it as training proceeds)."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        max_new_tokens: int = 16,
        temperature: float = 1.0,
        top_k: int | None = None,
        chat: bool = False,
        checkpoint: str = "local",
        weight_version: str | None = None,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.top_k = top_k
        self.chat = chat
        self.checkpoint = checkpoint
        self.weight_version = weight_version

    def __call__(self) -> TransformersPolicy:
        return TransformersPolicy(self)


class TransformersPolicy:
    """One episode's conversation with a local model; made by the factory."""

    def __init__(self, factory: TransformersPolicyFactory) -> None:
        self.factory = factory
        self.name = f"transformers:{factory.checkpoint}"
        self.checkpoint = factory.checkpoint
        self.context: list[int] = []
        self.turns = 0
        self._seed = 0

    @property
    def weight_version(self) -> str | None:
        return self.factory.weight_version

    async def start(self, ctx: EpisodeContext) -> None:
        self.context, self.turns, self._seed = [], 0, ctx.sampling_seed

    def _encode(self, observation: Observation, first: bool) -> list[int]:
        tok, messages = self.factory.tokenizer, observation.messages
        if self.factory.chat:
            conversation = [{"role": m.role, "content": m.content} for m in messages]
            ids = tok.apply_chat_template(
                conversation, tokenize=True, add_generation_prompt=True, return_dict=False
            )
            return list(ids["input_ids"] if isinstance(ids, dict) else ids)
        text = "\n\n".join(m.content for m in messages)
        return list(tok(text if first else "\n\n" + text, add_special_tokens=first).input_ids)

    async def act(self, observation: Observation) -> PolicyTurn:
        import torch

        f = self.factory
        self.context += self._encode(observation, first=not self.turns)
        self.turns += 1
        prompt = list(self.context)
        torch.manual_seed(self._seed * 1000 + self.turns)
        sample = f.temperature > 0
        with torch.no_grad():
            out = f.model.generate(
                torch.tensor([prompt]),
                attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
                max_new_tokens=f.max_new_tokens,
                do_sample=sample,
                temperature=f.temperature if sample else None,
                top_k=f.top_k if sample else None,
                top_p=None,
                pad_token_id=f.tokenizer.pad_token_id,
                eos_token_id=f.tokenizer.eos_token_id,
                return_dict_in_generate=True,
                output_scores=True,
            )
        completion = out.sequences[0, len(prompt) :].tolist()
        logprobs = [
            float(torch.log_softmax(score[0].float(), -1)[tid])
            for score, tid in zip(out.scores, completion, strict=False)
        ]
        while completion and completion[-1] == f.tokenizer.pad_token_id != f.tokenizer.eos_token_id:
            completion.pop()
            logprobs.pop()
        self.context += completion
        eos = f.tokenizer.eos_token_id
        finish = "stop" if completion and completion[-1] == eos else "length"
        text = f.tokenizer.decode(completion, skip_special_tokens=True)
        return CapturedTurn(
            parse_text(text, f"call_{self.turns}"),
            capture_level="tokens",
            text=text,
            prompt_token_ids=prompt,
            completion_token_ids=completion,
            logprobs=logprobs,
            finish_reason=finish,
            model=f.checkpoint,
            weight_version=f.weight_version,
        )
