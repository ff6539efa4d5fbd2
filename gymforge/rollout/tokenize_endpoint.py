"""The chat template as a vLLM server renders it: its ``/tokenize`` and ``/detokenize``.

These are vLLM's own endpoints beside the OpenAI API (not part of it, so not in the
``openai`` SDK's resources), asked once per ``vllm:`` turn for the template delta. They go
through the factory's :class:`~gymforge.rollout.json_http.JsonHttp` (the completions' lean
keep-alive client: the same connections, within one ``max_connections``), rather than the
SDK's generic ``post``: the SDK's per-request work (options models, header
merging, URL handling) costs several times the client CPU of the small request itself,
and this request is in every turn (``benchmarks/token_in_cpu.py``). Where the factory's
requests take the SDK's path (:meth:`~gymforge.rollout.server.ServerFactory.path`: a proxy
from the environment applies to the server, or the client authenticates per request),
these take it too, so no request of a turn goes past the proxy. Retries and backoff
are the shared ones (:func:`gymforge.rollout.server.call_with_retries`): connection
errors, timeouts, 408, 429 and 5xx are retried; a 404/405 means the server is not vLLM
(:class:`TokenInUnsupported`); any other 4xx is a :class:`PolicyRequestRejected`.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import jiter
import msgspec
import openai

from gymforge.core.seeding import derive_seed
from gymforge.rollout.chat_template import Toolset
from gymforge.rollout.json_http import JsonHttp
from gymforge.rollout.kept_fields import decode_kept
from gymforge.rollout.parsing import int_list
from gymforge.rollout.server import (
    RETRY_STATUS,
    BadResponse,
    PolicyRequestRejected,
    call_with_retries,
    post_json,
)

if TYPE_CHECKING:
    from gymforge.rollout.vllm_policy import VLLMPolicyFactory

Messages = list[dict[str, Any]]
Read = TypeVar("Read")
ALTERNATIVE = "use --policy openai:MODEL for a chat-only OpenAI-compatible server"


class TokenInUnsupported(PolicyRequestRejected):
    """The server cannot take token-id prompts or return token ids (not vLLM)."""


class ServerTemplate:
    """:class:`~gymforge.rollout.chat_template.Renderer` over the server's endpoints."""

    def __init__(self, factory: VLLMPolicyFactory) -> None:
        self.factory = factory
        self._rng = random.Random(derive_seed("vllm-template-backoff"))
        self._heads: dict[str, str] = {}

    def _client(self) -> tuple[JsonHttp, str]:
        """The factory's lean client (the completions' connections, within its one
        ``max_connections``) and the server root's path on it (its base path less
        ``/v1``, where vLLM serves ``/tokenize``)."""
        http = self.factory.lean()[0]
        root = http.prefix
        return http, root[:-3] if root.endswith("/v1") else root

    async def _post(
        self, path: str, body: dict[str, Any] | bytes, read: Callable[[bytes], Read]
    ) -> Read:
        f = self.factory
        payload = body if isinstance(body, bytes) else json.dumps(body).encode()

        async def send() -> Read:
            if f.path() != "lean":  # a proxy applies, or per-request credentials
                return await self._post_sdk(path, payload, read)
            http, root = self._client()
            try:  # call_with_retries bounds the call
                status, _, raw = await http.exchange(root + path, payload, None, rooted=True)
            except (OSError, EOFError, ValueError) as err:
                raise BadResponse(f"{f.root_url}{path}: {type(err).__name__}: {err}") from err
            if status in (404, 405):
                raise _unsupported(f.root_url, path, status)
            if status in RETRY_STATUS or status >= 500:
                raise BadResponse(f"{path}: HTTP {status}: {raw[:300]!r}")
            if status >= 400:
                raise _refused(f.root_url, path, status, raw)
            try:
                return read(raw)
            except NotAnObject as err:
                raise BadResponse(f"{path} answered {err}") from err
            except ValueError as err:
                raise BadResponse(f"{path} answered non-JSON: {raw[:200]!r}") from err

        data, _ = await call_with_retries(f, self._rng, send)
        return data

    async def _post_sdk(self, path: str, payload: bytes, read: Callable[[bytes], Read]) -> Read:
        """``payload`` posted through the SDK client's transport, which the completions take
        on this request path too (:meth:`ServerFactory.path`: it honours the environment's
        proxies and authenticates as the SDK does); its errors are the SDK's, which
        ``call_with_retries`` retries or refuses alike."""
        f = self.factory
        try:
            answer: Read = await post_json(
                f.client(), f.root_url + path, payload, f.retry.call_timeout, read
            )
        except openai.APIStatusError as err:
            status = err.status_code
            if status in (404, 405):
                raise _unsupported(f.root_url, path, status) from err
            if status in RETRY_STATUS or status >= 500:
                raise  # retried, as the lean path's answer is
            raise _refused(f.root_url, path, status, err.response.content) from err
        return answer

    async def chat_ids(self, messages: Messages, tools: Toolset, generation: bool) -> list[int]:
        head = self._heads.get(tools.key)
        if head is None:
            body = {"model": self.factory.model, "add_special_tokens": False}
            if tools.tools:
                body["tools"] = tools.tools
            head = self._heads[tools.key] = json.dumps(body, ensure_ascii=False)[:-1]
        gen = "true" if generation else "false"
        rest = json.dumps(messages, ensure_ascii=False)
        payload = f'{head}, "add_generation_prompt": {gen}, "messages": {rest}}}'.encode()
        return self._ids(await self._post("/tokenize", payload, read_tokenized))

    async def text_ids(self, text: str) -> list[int]:
        body = {"model": self.factory.model, "prompt": text, "add_special_tokens": False}
        return self._ids(await self._post("/tokenize", body, read_tokenized))

    def _ids(self, answer: Tokenized | dict[str, Any]) -> list[int]:
        """The ids of a ``/tokenize`` answer; the context length it states is kept."""
        ids: list[int] | None
        window: Any
        if isinstance(answer, Tokenized):  # exact ints already
            ids, window = answer.tokens, answer.max_model_len
        else:
            ids, window = int_list(answer.get("tokens")), answer.get("max_model_len")
        if type(window) is int and window > 0:
            self.factory.context_window = window
        if ids is None:
            raise TokenInUnsupported(
                f"/tokenize returned no token ids ({str(answer)[:200]}); {ALTERNATIVE}"
            )
        return ids

    async def text(self, ids: list[int]) -> str:
        body = {"model": self.factory.model, "tokens": ids}
        data = await self._post("/detokenize", body, json_object)
        return str(data.get("prompt", ""))


def _refused(root: str, path: str, status: int, raw: bytes) -> PolicyRequestRejected:
    text = raw[:500].decode(errors="replace")
    return PolicyRequestRejected(
        f"{root} refused {path} ({status}): {text}", status=status, detail=text
    )


def _unsupported(root: str, path: str, status: int) -> TokenInUnsupported:
    return TokenInUnsupported(
        f"{root} has no {path} (not a vLLM server?): pass --tokenizer PATH "
        f"to render the chat template locally, or {ALTERNATIVE}",
        status=status,
    )


class Tokenized(msgspec.Struct, gc=False):
    """What ``/tokenize``'s answer is read for: its ids and the context length it states."""

    tokens: list[int]
    max_model_len: int | None = None


_TOKENIZED = msgspec.json.Decoder(Tokenized)


def read_tokenized(raw: bytes) -> Tokenized | dict[str, Any]:
    """A ``/tokenize`` answer: its kept fields decoded into exact types
    (:mod:`gymforge.rollout.kept_fields`; the ids are hundreds a turn), else the answer
    whole (:func:`json_object`), to be read and refused as it always was."""
    typed = decode_kept(_TOKENIZED, raw)
    return typed if typed is not None else json_object(raw)


class NotAnObject(ValueError):
    """JSON, but not an object (its text, cut, is the message)."""


def json_object(raw: bytes) -> dict[str, Any]:
    """The answer decoded whole; ``ValueError`` when it is not JSON, :class:`NotAnObject`
    when it is JSON but not an object."""
    data = jiter.from_json(raw)
    if not isinstance(data, dict):
        raise NotAnObject(str(data)[:200])
    return data
