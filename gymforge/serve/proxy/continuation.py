"""The proxy's token-in path: continue the previous turn's exact token sequence.

When a chat request extends the previous one (:mod:`gymforge.serve.proxy.transcript`), the
proxy does what the ``vllm:`` policy does between turns: the new prompt is the previous
prompt ids + its completion ids as generated + what the template closes an assistant turn
with (less what the model already generated) + the template delta of the new messages
(:class:`~gymforge.rollout.chat_template.TemplateDelta`, rendered by the server's
``/tokenize`` or a local tokenizer, the same objects the policy uses). It sends that to the
completions endpoint as token ids, checks the server took them verbatim, and answers the
harness with the ``chat.completion`` a chat endpoint would have returned: tool calls parsed
from the text in the model's format, the stop string removed from the content, token ids
and logprobs only where the harness asked for them.
"""

from __future__ import annotations

import json
import time
from typing import Any

from gymforge.core.errors import UserError
from gymforge.core.types import Invalid, ToolCall
from gymforge.rollout.chat_template import close_rest
from gymforge.rollout.completion_reply import checked_ids, sampled_logprobs
from gymforge.rollout.tool_formats import parse_completion
from gymforge.rollout.vllm_policy import VLLMPolicyFactory
from gymforge.serve.proxy.transcript import ProxyTurn

# chat request fields the completions endpoint takes under the same name (the sampling
# fields of the proxy's allow-list, gymforge.serve.proxy.request)
SAMPLING_FIELDS = (
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "seed",
    "stop",
)


class Continuation:
    """Token-in continuation against one upstream vLLM server; one template per model."""

    def __init__(self, base_url: str, api_key: str | None, tokenizer: str | None) -> None:
        self.base_url = base_url
        self.api_key = api_key
        self.tokenizer = tokenizer
        self._factories: dict[str, VLLMPolicyFactory] = {}

    def factory(self, model: str) -> VLLMPolicyFactory:
        if model not in self._factories:
            self._factories[model] = VLLMPolicyFactory(
                model, base_url=self.base_url, api_key=self.api_key, tokenizer=self.tokenizer
            )
        return self._factories[model]

    async def aclose(self) -> None:
        for f in self._factories.values():
            await f.aclose()

    async def prompt(
        self,
        previous: ProxyTurn,
        new_messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        model: str,
    ) -> list[int]:
        """The exact prompt ids of the turn that extends ``previous`` (module docstring)."""
        assert previous.prompt_token_ids is not None and previous.completion_token_ids is not None
        template = self.factory(model).template
        names = {
            c.get("id"): (c.get("function") or {}).get("name")
            for c in previous.response_message.get("tool_calls") or []
        }
        messages = []
        for m in new_messages:
            m = dict(m)
            if m.get("role") == "tool" and not m.get("name") and names.get(m.get("tool_call_id")):
                m["name"] = names[m.get("tool_call_id")]  # hermes templates render it
            messages.append(m)
        completion = previous.completion_token_ids
        close = close_rest(completion, await template.close(tools))
        delta = await template.delta(messages, tools)
        return previous.prompt_token_ids + completion + close + delta

    async def room(self, model: str, prompt: list[int]) -> int | None:
        """What a chat endpoint gives a request without ``max_tokens``: the rest of the
        model's context after ``prompt`` (None when the server states no context length).
        The completions endpoint would default to 16 tokens instead."""
        window = await self.factory(model).window()
        return None if window is None else window - len(prompt)

    def completion_body(
        self, chat: dict[str, Any], prompt: list[int], room: int | None = None
    ) -> dict[str, Any]:
        """The completions request for chat request ``chat`` with prompt ids ``prompt``;
        ``room`` is the ``max_tokens`` sent when the chat request names none."""
        body: dict[str, Any] = {
            "model": chat.get("model"),
            "prompt": prompt,
            "return_token_ids": True,
            "include_stop_str_in_output": True,
            "logprobs": int(chat.get("top_logprobs") or 0),
        }
        max_tokens = chat.get("max_completion_tokens") or chat.get("max_tokens") or room
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        body.update((k, chat[k]) for k in SAMPLING_FIELDS if chat.get(k) is not None)
        return body

    async def chat_response(
        self, chat: dict[str, Any], prompt: list[int], data: dict[str, Any], call_id: str
    ) -> tuple[dict[str, Any], list[int], list[float] | None]:
        """``(chat.completion for the harness, completion ids, logprobs)`` from the
        completions response ``data``."""
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise UserError(f"the server's completion has no choices: {str(data)[:200]}")
        choice = choices[0]
        completion = checked_ids(choice, prompt, self.base_url)
        logprobs = sampled_logprobs(choice)
        raw_text = choice.get("text")
        text = raw_text if isinstance(raw_text, str) else ""
        finish = choice.get("finish_reason")
        model = str(chat.get("model"))
        fmt = await self.factory(model).format_for(chat.get("tools") or None)
        action = parse_completion(text, fmt, call_id)
        content: str | None = _without_stop(text, chat.get("stop"), finish)
        calls: list[dict[str, Any]] = []
        if isinstance(action, ToolCall):
            head = text.split("<tool_call>", 1)[0].strip() if fmt == "hermes" else ""
            content = head or None
            calls = [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": action.name, "arguments": json.dumps(action.arguments)},
                }
            ]
            finish = "tool_calls" if finish == "stop" else finish
        elif isinstance(action, Invalid):
            content = text
        message: dict[str, Any] = {"role": "assistant", "content": content, "tool_calls": calls}
        out_choice: dict[str, Any] = {
            "index": 0,
            "message": message,
            "logprobs": None,
            "finish_reason": finish,
        }
        if chat.get("logprobs"):
            out_choice["logprobs"] = {"content": _chat_logprobs(choice.get("logprobs"))}
        response: dict[str, Any] = {
            "id": str(data.get("id") or f"chatcmpl-{call_id}"),
            "object": "chat.completion",
            "created": int(data.get("created") or time.time()),
            "model": data.get("model") or model,
            "choices": [out_choice],
            "usage": data.get("usage"),
        }
        if chat.get("return_token_ids"):
            response["prompt_token_ids"] = prompt
            out_choice["token_ids"] = completion
        return response, completion, logprobs


def _without_stop(text: str, stop: Any, finish: Any) -> str:
    """The content as a chat endpoint returns it: a matched stop string is not part of it."""
    stops = [stop] if isinstance(stop, str) else stop if isinstance(stop, list) else []
    if finish == "stop":
        for s in stops:
            if isinstance(s, str) and s and text.endswith(s):
                return text[: -len(s)]
    return text


def _chat_logprobs(lp: Any) -> list[dict[str, Any]]:
    """Completions-style logprobs (``tokens``, ``token_logprobs``, ``top_logprobs``) in the
    chat shape (``content[i]`` with ``token``, ``logprob``, ``bytes``, ``top_logprobs``)."""
    if not isinstance(lp, dict):
        return []
    tokens = lp.get("tokens") or []
    values = lp.get("token_logprobs") or []
    tops = lp.get("top_logprobs") or [None] * len(tokens)
    out = []
    for token, value, top in zip(tokens, values, tops, strict=False):
        alternatives = [
            {"token": t, "logprob": v, "bytes": list(str(t).encode())}
            for t, v in (top or {}).items()
        ]
        out.append(
            {
                "token": token,
                "logprob": value,
                "bytes": list(str(token).encode()),
                "top_logprobs": alternatives,
            }
        )
    return out
