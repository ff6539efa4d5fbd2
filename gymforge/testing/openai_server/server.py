"""The test server: a local OpenAI-compatible server for tests and benchmarks (no GPU).

``OpenAITestServer`` is a real HTTP server (aiohttp) on 127.0.0.1 and an ephemeral port,
running in a background thread with its own event loop, so sync and async tests can both
drive the real ``openai`` SDK against it. It serves ``POST /v1/chat/completions``
(:mod:`~gymforge.testing.openai_server.chat`), ``POST /v1/completions`` with token-id
prompts, ``POST /tokenize`` and ``/detokenize``
(:mod:`~gymforge.testing.openai_server.token_in`) and ``GET /v1/models``, with vLLM's
documented extra fields:

- ``prompt_token_ids`` at the top level and ``choices[0].token_ids`` when the request asks
  ``return_token_ids``;
- ``choices[0].logprobs.content[i]`` with ``token``, ``logprob``, ``bytes``,
  ``top_logprobs`` when it asks ``logprobs`` (tokens read ``token_id:<id>`` when it asks
  ``return_tokens_as_token_ids``); ``usage`` always.

Like vLLM, a stop string ends a completion: the text keeps it only when the request sets
``include_stop_str_in_output``, while its tokens stay in ``token_ids`` either way.
``noncanonical_grammar=True`` imitates vLLM's hermes tool parser when a chat request sends
``parallel_tool_calls``: the tool-call grammar forces tokens that canonical tokenisation
never produces (:data:`~gymforge.testing.openai_server.fake.FORCED_TOKENS`), recorded with
logprob 0.0 (forced, not sampled), so the next turn's re-rendered prompt does not extend
the last one. ``token_in=False`` is a plain OpenAI-compatible server: no ``/tokenize`` and
no token ids on completions.

Tokenisation is fake and deterministic so tests can check pass-through exactly: the prompt
is rendered by :func:`render_prompt` and the completion by :func:`render_completion`, and
each UTF-8 byte is one token (:func:`fake_tokenize`); :func:`fake_logprob` gives logprobs.

What the model says comes from a pluggable *responder* ``(request_json) -> ServedReply |
str``; a responder may raise :class:`ServedError` to answer with an HTTP error. Faults are
controlled from the test: ``latency`` (seconds, or a function of the request), and
``inject(*kinds)`` queues one fault per coming request, in arrival order:

- ``"429"``, ``"500"``, ``"503"``: an OpenAI-shaped error body with that status;
  ``"429-retry-after"``: a 429 with ``Retry-After: 1``;
- ``"not-json"``: a 200 whose body is not JSON; ``"no-choices"``: a 200 with ``choices: []``;
- ``"drop"``: headers and half the body are sent, then the socket is closed;
- ``"reset"``: the socket is closed before any response;
- ``"malformed"``: the reply's tool-call arguments become invalid JSON;
- ``"context"``, ``"context-zero"``, ``"context-at-least"``, ``"context-too-large"``,
  ``"context-openai"``: a 400 saying the context is full, in that engine wording
  (:func:`~gymforge.testing.openai_server.fake.context_refusal`).

With ``max_context`` the server refuses what would overflow it as vLLM does, in vLLM's
wordings (:func:`~gymforge.testing.openai_server.fake.vllm_max_tokens`); ``/tokenize`` and
``/v1/models`` state it as ``max_model_len``. A request without ``max_tokens`` gets the
rest of the context, or on the completions endpoint ``completions_default`` tokens when set
(vLLM's is :data:`~gymforge.testing.openai_server.fake.VLLM_COMPLETIONS_DEFAULT_MAX_TOKENS`,
16: set it to test what a real vLLM does to a request that sends none).

``stop()`` kills the server (in-flight requests are cut); ``start()`` brings it back on the
same port. ``python -m gymforge.testing.openai_server --latency 1`` runs one standalone.
"""

from __future__ import annotations

import asyncio
import collections
import json
from collections.abc import Callable
from typing import Any

from aiohttp import web

from gymforge.serve.loop_thread import LoopThread, start_site
from gymforge.serve.proxy import sse
from gymforge.testing.openai_server import chat, token_in
from gymforge.testing.openai_server.fake import (
    CONTEXT_FAULTS,
    FAULTS,
    Responder,
    ServedError,
    context_refusal,
    echo_responder,
    fake_tokenize,
    render_prompt,
)


# ---- the server -------------------------------------------------------------------------
class OpenAITestServer:
    """See the module docstring. Use as a context manager or call ``start``/``stop``."""

    def __init__(
        self,
        responder: Responder = echo_responder,
        *,
        model: str = "gymforge-test",
        latency: float | Callable[[dict[str, Any]], float] = 0.0,
        port: int = 0,
        record: bool = True,
        serve_prompt_ids: bool = True,
        serve_completion_ids: bool = True,
        max_context: int | None = None,
        cache: bool = False,
        cache_limit: int = 4096,
        token_in: bool = True,
        noncanonical_grammar: bool = False,
        completions_default: int | None = None,
    ) -> None:
        self.responder = responder
        self.model = model
        self.latency = latency
        self.port = port
        self.record = record
        # False: leave that field out even when asked (an older or different server)
        self.serve_prompt_ids = serve_prompt_ids
        self.serve_completion_ids = serve_completion_ids
        self.max_context = max_context
        self.cache: dict[bytes, bytes] | None = {} if cache else None  # request -> response
        self.cache_limit = cache_limit  # requests kept; a benchmark sizes it to all it sends
        self.token_in = token_in  # False: a plain server (no /tokenize, no ids back)
        self.noncanonical_grammar = noncanonical_grammar
        # max_tokens of a completions request that sends none (vLLM's: 16); None: the rest
        self.completions_default = completions_default
        self.requests: list[dict[str, Any]] = []
        self.faults: collections.deque[str] = collections.deque()
        self.served: collections.Counter[str] = collections.Counter()
        # (path, Host header) of every request: as a proxy, the server each was meant for
        self.hosts: collections.Counter[tuple[str, str]] = collections.Counter()
        self.models_failures = 0  # the next this many /v1/models requests are answered 500
        self._loop_thread = LoopThread("openai-test-server")
        self._runner: web.AppRunner | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def inject(self, *kinds: str) -> None:
        """Queue faults, one per coming request (see the module docstring)."""
        unknown = set(kinds) - FAULTS
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}; known: {sorted(FAULTS)}")
        self.faults.extend(kinds)

    # ---- lifecycle ----------------------------------------------------------------------
    def start(self, timeout: float = 10.0) -> OpenAITestServer:
        self._loop_thread.start(self._serve, timeout)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Kill the server: in-flight requests are cut, new connections refused."""
        self._loop_thread.stop(self._shutdown, timeout)

    def __enter__(self) -> OpenAITestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _serve(self) -> None:
        app = web.Application(client_max_size=64 * 2**20)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/completions", self._completions)
        app.router.add_get("/v1/models", self._models)
        if self.token_in:
            app.router.add_post("/tokenize", self._tokenize)
            app.router.add_post("/detokenize", self._detokenize)
        self._runner = web.AppRunner(
            app,
            handle_signals=False,
            access_log=None,
            shutdown_timeout=0.2,
            handler_cancellation=True,  # a client that gives up frees its handler
        )
        self.port = await start_site(self._runner, "127.0.0.1", self.port, backlog=8192)

    async def _shutdown(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in pending:  # handlers still sleeping on injected latency
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=2.0)

    # ---- handlers -----------------------------------------------------------------------
    async def _models(self, request: web.Request) -> web.Response:
        self.hosts[request.path, request.headers.get("Host", "")] += 1
        if self.models_failures > 0:
            self.models_failures -= 1
            return _error(500, "the model list is not available")
        data = [
            {
                "id": self.model,
                "object": "model",
                "created": 0,
                "owned_by": "gymforge",
                "max_model_len": self.max_context or 1 << 20,
            }
        ]
        return web.json_response({"object": "list", "data": data})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        def build(body: dict[str, Any], malformed: bool) -> dict[str, Any]:
            return chat.chat_completion(
                self.responder,
                body,
                self.model,
                self.max_context,
                malformed,
                noncanonical_grammar=self.noncanonical_grammar,
                serve_prompt_ids=self.serve_prompt_ids,
                serve_completion_ids=self.serve_completion_ids,
            )

        return await self._handle(request, "messages", build)

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        def build(body: dict[str, Any], malformed: bool) -> dict[str, Any]:
            if not self.token_in:
                body = {**body, "return_token_ids": False}  # a plain server ignores it
            return token_in.text_completion(
                self.responder,
                body,
                self.model,
                self.max_context,
                malformed,
                default_max_tokens=self.completions_default,
            )

        return await self._handle(request, "prompt", build)

    async def _tokenize(self, request: web.Request) -> web.Response:
        return await self._simple(request, lambda b: token_in.tokenize(b, self.max_context))

    async def _detokenize(self, request: web.Request) -> web.Response:
        return await self._simple(request, token_in.detokenize)

    async def _simple(
        self, request: web.Request, build: Callable[[dict[str, Any]], dict[str, Any]]
    ) -> web.Response:
        try:
            body = json.loads(await request.read())
            self.served[request.path] += 1
            self.hosts[request.path, request.headers.get("Host", "")] += 1
            return web.json_response(build(body if isinstance(body, dict) else {}))
        except ValueError:
            return _error(400, "request body is not JSON")
        except ServedError as err:
            return _error(err.status, err.message, code=err.code)

    async def _handle(
        self,
        request: web.Request,
        required: str,
        build: Callable[[dict[str, Any], bool], dict[str, Any]],
    ) -> web.StreamResponse:
        raw = await request.read()
        self.hosts[request.path, request.headers.get("Host", "")] += 1
        cached = self.cache.get(raw) if self.cache is not None else None
        try:
            body = {required: []} if cached and not self.record else json.loads(raw)
        except ValueError:
            return _error(400, "request body is not JSON")
        if not isinstance(body, dict) or body.get(required) is None:
            return _error(400, f"{required} is required")
        if required == "messages" and not isinstance(body["messages"], list):
            return _error(400, "messages must be a list")
        if self.record:
            self.requests.append(body)
        fault = self.faults.popleft() if self.faults else None
        latency = self.latency(body) if callable(self.latency) else self.latency
        if latency > 0:
            await asyncio.sleep(latency)
        if fault:
            self.served[fault] += 1
        if fault == "reset":
            _abort(request)
            raise asyncio.CancelledError  # aiohttp drops the connection without a response
        if fault in ("429", "500", "503"):
            return _error(int(fault), f"injected {fault}", code=fault)
        if fault == "429-retry-after":
            response = _error(429, "injected 429", code="429")
            response.headers["Retry-After"] = "1"
            return response
        if fault == "not-json":
            return web.Response(text="<html>bad gateway</html>", content_type="text/html")
        if fault == "no-choices":
            return web.json_response(
                {"id": "chatcmpl-0", "object": "chat.completion", "choices": []}
            )
        if fault in CONTEXT_FAULTS:
            asked = body.get("max_tokens") or body.get("max_completion_tokens")
            message, code = context_refusal(fault, self._prompt_length(body, required), asked)
            return _error(400, message, code=code)
        if cached is not None and fault is None:
            data = cached
        else:
            try:
                data = json.dumps(build(body, fault == "malformed")).encode()
            except ServedError as err:
                return _error(err.status, err.message, code=err.code)
            if self.cache is not None and fault is None and len(self.cache) < self.cache_limit:
                self.cache[raw] = data
        if body.get("stream") and required == "messages" and fault != "drop":
            return await sse.respond(request, json.loads(data), body)
        if fault == "drop":
            resp = web.StreamResponse(
                headers={"Content-Type": "application/json", "Content-Length": str(len(data))}
            )
            await resp.prepare(request)
            await resp.write(data[: len(data) // 2])
            _abort(request)
            raise asyncio.CancelledError
        self.served["ok"] += 1
        return web.Response(body=data, content_type="application/json")

    @staticmethod
    def _prompt_length(body: dict[str, Any], required: str) -> int:
        if required == "messages":
            return len(fake_tokenize(render_prompt(body["messages"], body.get("tools"))))
        try:
            return len(token_in.prompt_ids(body))
        except ServedError:
            return 1


def _error(status: int, message: str, code: str | None = None) -> web.Response:
    kind = {400: "BadRequestError", 429: "RateLimitError"}.get(status, "InternalServerError")
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return web.json_response(body, status=status)


def _abort(request: web.Request) -> None:
    if request.transport is not None:
        request.transport.abort()
