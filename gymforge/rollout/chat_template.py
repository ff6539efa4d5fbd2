"""The model's own chat template, as token deltas, for the token-in ``vllm:`` policy.

A token-in policy never re-renders earlier turns. It needs three things from the template,
each computed by rendering small conversations and cutting at token boundaries:

- **the first prompt**: ``render(reset messages, tools, add_generation_prompt=True)``;
- **the close of an assistant turn** (``<|im_end|>\\n`` for ChatML, ``<|eot_id|>`` for
  Llama 3): with ``U = [user "."]`` and ``A = U + [assistant "."]``, the tokens of
  ``render(A)`` after ``render(U, add_generation_prompt=True)`` and after the tokens of the
  content ``"."``. After a completion, the policy appends what of the close the model has not
  already generated: a completion ending in EOS (``<|im_end|>``) gets ``\\n``; one cut by
  ``length`` or a stop string gets the whole close;
- **the delta of new environment messages** ``M``: the tokens of
  ``render(A + M, add_generation_prompt=True)`` after those of ``render(A)``, i.e. exactly
  what the template adds after an assistant turn for those messages, generation prompt
  included. ``A`` is fixed, so ``render(A)`` is computed once per run; the check that the
  longer rendering starts with it (a template whose output for a message depends on later
  ones would fail it) raises :class:`TemplateError` rather than guess.

Every rendering passes the episode's tools, so templates that put tools in the system turn
or the first user turn render the same context either way. Tool results carry the called
function's ``name`` (hermes-style templates require it).

Two backends render and tokenise: :class:`ServerTemplate` asks the vLLM server's
``/tokenize`` (chat form, ``add_special_tokens=False`` as vLLM's own chat path does) and
``/detokenize``; :class:`LocalTemplate` loads a tokenizer with ``transformers``
(``--tokenizer PATH``), renders with ``apply_chat_template(tokenize=False)`` and encodes the
text without added special tokens. Both give the same ids for the same tokenizer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from gymforge.core.errors import UserError
from gymforge.rollout.parsing import tools_not_json

Messages = list[dict[str, Any]]
Tools = list[dict[str, Any]] | None
USER = {"role": "user", "content": "."}
ASSISTANT = {"role": "assistant", "content": "."}
PROBE_CALL = {
    "role": "assistant",
    "content": "",
    "tool_calls": [
        {
            "id": "call_0",
            "type": "function",
            "function": {"name": "probe_tool", "arguments": '{"probe": 1}'},
        }
    ],
}


class TemplateError(UserError):
    """The chat template cannot be used token-in (it is not prefix-stable at a message
    boundary, or it fails to render)."""


@dataclass(frozen=True, slots=True)
class Toolset:
    """An episode's tools and their JSON, encoded once (a policy makes one per episode): the
    key of what the template renders the same for every episode with these tools. ``tools``
    is read back from that JSON, so what is rendered is what the key says even if the lists
    given are changed later."""

    tools: Tools
    key: str = field(init=False)

    def __post_init__(self) -> None:
        try:
            key = json.dumps(self.tools or None, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as err:
            raise tools_not_json(self.tools) or err from err
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "tools", json.loads(key))

    @staticmethod
    def of(tools: Tools | Toolset) -> Toolset:
        return tools if isinstance(tools, Toolset) else Toolset(tools)


class Renderer(Protocol):
    """Renders and tokenises with the model's tokenizer and chat template."""

    async def chat_ids(self, messages: Messages, tools: Toolset, generation: bool) -> list[int]: ...

    async def text_ids(self, text: str) -> list[int]: ...

    async def text(self, ids: list[int]) -> str: ...


class TemplateDelta:
    """The first prompt, assistant close and message deltas of one template (module
    docstring). Results that do not depend on the episode are cached per tool list. Each
    method takes the tools as a list or, cheaper turn after turn, a :class:`Toolset`."""

    def __init__(self, renderer: Renderer) -> None:
        self.renderer = renderer
        self._base: dict[str, list[int]] = {}
        self._close: dict[str, list[int]] = {}

    async def first_prompt(self, messages: Messages, tools: Tools | Toolset) -> list[int]:
        return await self.renderer.chat_ids(messages, Toolset.of(tools), True)

    async def close(self, tools: Tools | Toolset) -> list[int]:
        """The tokens the template puts after an assistant turn's content."""
        tools = Toolset.of(tools)
        key = tools.key
        if key not in self._close:
            r = self.renderer
            head = await r.chat_ids([USER], tools, True)
            full = await r.chat_ids([USER, ASSISTANT], tools, False)
            content = await r.text_ids(ASSISTANT["content"])
            cut = len(head) + len(content)
            if full[: len(head)] != head or full[len(head) : cut] != content:
                raise TemplateError(
                    "the chat template's assistant turn does not extend its generation prompt "
                    "token by token; it cannot be used token-in"
                )
            self._close[key] = full[cut:]
        return self._close[key]

    async def delta(self, messages: Messages, tools: Tools | Toolset) -> list[int]:
        """The tokens ``messages`` add after an assistant turn, generation prompt included."""
        tools = Toolset.of(tools)
        key = tools.key
        if key not in self._base:
            self._base[key] = await self.renderer.chat_ids([USER, ASSISTANT], tools, False)
        base = self._base[key]
        full = await self.renderer.chat_ids([USER, ASSISTANT, *messages], tools, True)
        if full[: len(base)] != base:
            raise TemplateError(
                "the chat template renders earlier messages differently once new ones follow "
                f"(roles {[m.get('role') for m in messages]}); it cannot be used token-in"
            )
        return full[len(base) :]

    async def probe_text(self, tools: Tools | Toolset) -> str:
        """How the template renders an assistant tool call (for format detection)."""
        ids = await self.renderer.chat_ids([USER, PROBE_CALL], Toolset.of(tools), False)
        return await self.renderer.text(ids)


def close_rest(completion: list[int], close: list[int]) -> list[int]:
    """What of ``close`` to append after ``completion``: the longest prefix of ``close``
    that the completion already ends with is not repeated."""
    for j in range(min(len(close), len(completion)), 0, -1):
        if completion[-j:] == close[:j]:
            return close[j:]
    return close


class LocalTemplate:
    """:class:`Renderer` over a ``transformers`` tokenizer loaded from ``path`` (a model
    directory or tokenizer files). Loading happens here, so a bad path is a one-line
    ``UserError`` before any episode starts."""

    def __init__(self, path: str) -> None:
        try:
            from transformers import AutoTokenizer
        except ImportError as err:
            raise UserError(
                f"--tokenizer needs transformers (pip install 'gymforge[train]'): {err}"
            ) from err
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(path)
        except Exception as err:  # OSError, ValueError, JSON errors: all one line
            first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise UserError(f"cannot load tokenizer {path!r}: {first[:300]}") from err
        if not getattr(self.tokenizer, "chat_template", None):
            raise UserError(f"tokenizer {path!r} has no chat template")
        self.path = path

    def render(self, messages: Messages, tools: Tools, generation: bool) -> str:
        try:
            tool_list: Any = tools or None
            text = self.tokenizer.apply_chat_template(
                messages, tools=tool_list, add_generation_prompt=generation, tokenize=False
            )
        except Exception as err:
            raise TemplateError(f"the chat template failed to render: {err}") from err
        return str(text)

    async def chat_ids(self, messages: Messages, tools: Toolset, generation: bool) -> list[int]:
        return await self.text_ids(self.render(messages, tools.tools, generation))

    async def text_ids(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    async def text(self, ids: list[int]) -> str:
        return str(self.tokenizer.decode(ids, skip_special_tokens=False))
