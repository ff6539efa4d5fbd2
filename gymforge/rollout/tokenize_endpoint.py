"""The chat template as a vLLM server renders it: its ``/tokenize`` and ``/detokenize``.

These are vLLM's own endpoints beside the OpenAI API (not part of it, so not in the
``openai`` SDK's resources), asked once per ``vllm:`` turn for the template delta. They go
through :class:`~gymforge.rollout.json_http.JsonHttp`, a lean keep-alive client, rather
than the SDK's generic ``post``: the SDK's per-request work (options models, header
merging, URL handling) costs several times the client CPU of the small request itself,
and this request is in every turn (``benchmarks/token_in_cpu.py``). Retries and backoff
are the shared ones (:func:`gymforge.rollout.server.call_with_retries`): connection
errors, timeouts, 408, 429 and 5xx are retried; a 404/405 means the server is not vLLM
(:class:`TokenInUnsupported`); any other 4xx is a :class:`PolicyRequestRejected`.
"""

from __future__ import annotations

import json
import random
from typing import TYPE_CHECKING, Any

import jiter

from gymforge.core.seeding import derive_seed
from gymforge.rollout.json_http import JsonHttp
from gymforge.rollout.server import (
    RETRY_STATUS,
    BadResponse,
    PolicyRequestRejected,
    call_with_retries,
)

if TYPE_CHECKING:
    from gymforge.rollout.vllm_policy import VLLMPolicyFactory

Messages = list[dict[str, Any]]
Tools = list[dict[str, Any]] | None
ALTERNATIVE = "use --policy openai:MODEL for a chat-only OpenAI-compatible server"


class TokenInUnsupported(PolicyRequestRejected):
    """The server cannot take token-id prompts or return token ids (not vLLM)."""


class ServerTemplate:
    """:class:`~gymforge.rollout.chat_template.Renderer` over the server's endpoints."""

    def __init__(self, factory: VLLMPolicyFactory) -> None:
        self.factory = factory
        self._rng = random.Random(derive_seed("vllm-template-backoff"))
        self._heads: dict[str, str] = {}
        self._http: JsonHttp | None = None

    def _client(self) -> JsonHttp:
        if self._http is None:
            auth = {"Authorization": f"Bearer {self.factory.api_key}"}
            self._http = JsonHttp(self.factory.root_url, auth)
        return self._http

    def __getstate__(self) -> dict[str, Any]:  # picklable for Ray: connections stay behind
        return {**self.__dict__, "_http": None}

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()

    async def _post(self, path: str, body: dict[str, Any] | bytes) -> dict[str, Any]:
        f = self.factory
        url = f.root_url + path
        payload = body if isinstance(body, bytes) else json.dumps(body).encode()

        async def send() -> dict[str, Any]:
            try:
                status, raw = await self._client().post(path, payload, f.retry.call_timeout)
            except (OSError, EOFError, ValueError) as err:
                raise BadResponse(f"{url}: {type(err).__name__}: {err}") from err
            if status in (404, 405):
                raise TokenInUnsupported(
                    f"{f.root_url} has no {path} (not a vLLM server?): pass --tokenizer PATH "
                    f"to render the chat template locally, or {ALTERNATIVE}",
                    status=status,
                )
            if status in RETRY_STATUS or status >= 500:
                raise BadResponse(f"{path}: HTTP {status}: {raw[:300]!r}")
            if status >= 400:
                raise PolicyRequestRejected(
                    f"{f.root_url} refused {path} ({status}): {raw[:500].decode(errors='replace')}",
                    status=status,
                )
            try:
                data = jiter.from_json(raw)
            except ValueError as err:
                raise BadResponse(f"{path} answered non-JSON: {raw[:200]!r}") from err
            if not isinstance(data, dict):
                raise BadResponse(f"{path} answered {str(data)[:200]}")
            return data

        data, _ = await call_with_retries(f, self._rng, send)
        return data

    async def chat_ids(self, messages: Messages, tools: Tools, generation: bool) -> list[int]:
        key = json.dumps(tools or None)  # the tools' JSON is encoded once per tool list
        head = self._heads.get(key)
        if head is None:
            body = {"model": self.factory.model, "add_special_tokens": False}
            if tools:
                body["tools"] = tools
            head = self._heads[key] = json.dumps(body, ensure_ascii=False)[:-1]
        gen = "true" if generation else "false"
        rest = json.dumps(messages, ensure_ascii=False)
        payload = f'{head}, "add_generation_prompt": {gen}, "messages": {rest}}}'.encode()
        return self._ids(await self._post("/tokenize", payload))

    async def text_ids(self, text: str) -> list[int]:
        body = {"model": self.factory.model, "prompt": text, "add_special_tokens": False}
        return self._ids(await self._post("/tokenize", body))

    def _ids(self, data: dict[str, Any]) -> list[int]:
        """The ids of a ``/tokenize`` answer; the context length it states is kept."""
        window = data.get("max_model_len")
        if type(window) is int and window > 0:
            self.factory.context_window = window
        return _ids(data)

    async def text(self, ids: list[int]) -> str:
        data = await self._post("/detokenize", {"model": self.factory.model, "tokens": ids})
        return str(data.get("prompt", ""))


def _ids(data: dict[str, Any]) -> list[int]:
    ids = data.get("tokens")
    if not isinstance(ids, list) or not set(map(type, ids)) <= {int}:
        raise TokenInUnsupported(
            f"/tokenize returned no token ids ({str(data)[:200]}); {ALTERNATIVE}"
        )
    return ids
