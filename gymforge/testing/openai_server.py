"""A local OpenAI-compatible chat server for tests and benchmarks (no GPU, no model).

``OpenAITestServer`` is a real HTTP server (aiohttp) on 127.0.0.1 and an ephemeral port,
running in a background thread with its own event loop, so sync and async tests can both
drive the real ``openai`` SDK against it. It serves ``POST /v1/chat/completions`` and
``GET /v1/models`` with vLLM's documented extra fields:

- ``prompt_token_ids`` at the top level and ``choices[0].token_ids`` when the request asks
  ``return_token_ids``;
- ``choices[0].logprobs.content[i]`` with ``token``, ``logprob``, ``bytes``,
  ``top_logprobs`` when it asks ``logprobs`` (tokens read ``token_id:<id>`` when it asks
  ``return_tokens_as_token_ids``); ``usage`` always.

Tokenisation is fake and deterministic so tests can check pass-through exactly: the prompt
is rendered by :func:`render_prompt` and the completion by :func:`render_completion`, and
each UTF-8 byte is one token (:func:`fake_tokenize`); :func:`fake_logprob` gives logprobs.

What the model says comes from a pluggable *responder* ``(request_json) -> ServedReply |
str``; a responder may raise :class:`ServedError` to answer with an HTTP error. Faults are
controlled from the test: ``latency`` (seconds, or a function of the request), and
``inject(*kinds)`` queues one fault per coming request, in arrival order:

- ``"429"``, ``"500"``, ``"503"``: an OpenAI-shaped error body with that status;
- ``"drop"``: headers and half the body are sent, then the socket is closed;
- ``"reset"``: the socket is closed before any response;
- ``"malformed"``: the reply's tool-call arguments become invalid JSON;
- ``"context"``: a 400 with vLLM's context-length message.

``stop()`` kills the server (in-flight requests are cut); ``start()`` brings it back on the
same port. ``python -m gymforge.testing.openai_server --latency 1`` runs one standalone.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import hashlib
import importlib
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

FAULTS = frozenset({"429", "500", "503", "drop", "reset", "malformed", "context"})


@dataclass(frozen=True)
class ServedToolCall:
    """A tool call the fake model makes. ``arguments`` may be a dict or raw (possibly bad)
    JSON text, sent verbatim."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)

    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False)


@dataclass(frozen=True)
class ServedReply:
    """What the fake model answers: text, structured tool calls, or both."""

    content: str | None = None
    tool_calls: tuple[ServedToolCall, ...] = ()
    finish_reason: str | None = None  # default: "tool_calls" if tool_calls else "stop"


class ServedError(Exception):
    """Raised by a responder to answer with an HTTP error in OpenAI's error shape."""

    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.code = status, message, code


Responder = Callable[[dict[str, Any]], "ServedReply | str"]


def echo_responder(request: dict[str, Any]) -> ServedReply:
    """Replies with the text of the last message."""
    messages = request.get("messages") or [{}]
    return ServedReply(content="echo: " + _content_text(messages[-1].get("content")))


def scripted_responder(replies: Sequence[ServedReply | str]) -> Responder:
    """Answers turn k of a conversation (k = assistant messages already in it) with
    ``replies[k]`` (the last one repeats). Stateless, so concurrent conversations work."""
    if not replies:
        raise ValueError("scripted_responder needs at least one reply")

    def respond(request: dict[str, Any]) -> ServedReply | str:
        k = sum(m.get("role") == "assistant" for m in request.get("messages", []))
        reply: ServedReply | str = replies[min(k, len(replies) - 1)]
        return reply

    return respond


# ---- fake tokenisation ------------------------------------------------------------------
def fake_tokenize(text: str) -> list[int]:
    """One token per UTF-8 byte: the id is the byte value."""
    return list(text.encode("utf-8"))


def fake_logprob(token_id: int, position: int) -> float:
    """A deterministic, exactly representable logprob for ``token_id`` at ``position``."""
    return -((token_id * 31 + position * 7) % 97) / 16.0


def _content_text(content: Any) -> str:
    if isinstance(content, list):  # OpenAI content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def render_completion(content: str | None, tool_calls: Sequence[dict[str, Any]] = ()) -> str:
    """The raw text a Hermes-style model would emit: content, then one ``<tool_call>``
    block per call with its arguments text verbatim."""
    parts = [content or ""]
    for call in tool_calls:
        fn = call.get("function", call)
        parts.append(
            f'<tool_call>{{"name": {json.dumps(fn.get("name"))}, '
            f'"arguments": {fn.get("arguments") or "{}"}}}</tool_call>'
        )
    return "".join(parts)


def render_prompt(messages: Sequence[dict[str, Any]], tools: Sequence[Any] | None = None) -> str:
    """The fake chat template: a tools header, every message, then the generation prompt."""
    out = []
    if tools:
        out.append("<|tools|>" + json.dumps(list(tools), sort_keys=True) + "<|end|>\n")
    for m in messages:
        body = _content_text(m.get("content"))
        if m.get("role") == "assistant":
            body = render_completion(body, m.get("tool_calls") or ())
        if m.get("tool_call_id"):
            body = f"[{m['tool_call_id']}]" + body
        out.append(f"<|{m.get('role')}|>{body}<|end|>\n")
    return "".join(out) + "<|assistant|>"


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
        self.requests: list[dict[str, Any]] = []
        self.faults: collections.deque[str] = collections.deque()
        self.served: collections.Counter[str] = collections.Counter()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
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
        if self._thread is not None:
            raise RuntimeError("server already running")
        ready = threading.Event()
        errors: list[BaseException] = []

        def main() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            self._loop = loop
            try:
                loop.run_until_complete(self._serve())
            except BaseException as err:
                errors.append(err)
                ready.set()
                loop.close()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

        self._thread = threading.Thread(target=main, name="openai-test-server", daemon=True)
        self._thread.start()
        if not ready.wait(timeout):
            raise TimeoutError(f"test server did not start within {timeout} s")
        if errors:
            self._thread = None
            raise RuntimeError(f"test server failed to start: {errors[0]!r}") from errors[0]
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Kill the server: in-flight requests are cut, new connections refused."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        fut = asyncio.run_coroutine_threadsafe(self._shutdown(), loop)
        try:
            fut.result(timeout)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout)
            self._thread = self._loop = None

    def __enter__(self) -> OpenAITestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _serve(self) -> None:
        app = web.Application(client_max_size=64 * 2**20)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        self._runner = web.AppRunner(
            app,
            handle_signals=False,
            access_log=None,
            shutdown_timeout=0.2,
            handler_cancellation=True,  # a client that gives up frees its handler
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port, backlog=8192)
        await site.start()
        server = getattr(site, "_server", None)
        if server is not None and server.sockets:
            self.port = server.sockets[0].getsockname()[1]

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
        data = [{"id": self.model, "object": "model", "created": 0, "owned_by": "gymforge"}]
        return web.json_response({"object": "list", "data": data})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        cached = self.cache.get(raw) if self.cache is not None else None
        try:
            body = {"messages": []} if cached and not self.record else json.loads(raw)
        except ValueError:
            return _error(400, "request body is not JSON")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
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
        if fault == "context":
            return _error(400, _context_message(len(fake_tokenize(str(body))), 1))
        if cached is not None and fault is None:
            data = cached
        else:
            try:
                data = json.dumps(self._completion(body, malformed=fault == "malformed")).encode()
            except ServedError as err:
                return _error(err.status, err.message, code=err.code)
            if self.cache is not None and fault is None and len(self.cache) < 4096:
                self.cache[raw] = data
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

    def _completion(self, req: dict[str, Any], malformed: bool = False) -> dict[str, Any]:
        """The vLLM-shaped response for request ``req`` (raises ServedError)."""
        reply = self.responder(req)
        if isinstance(reply, str):
            reply = ServedReply(content=reply)
        prompt_text = render_prompt(req["messages"], req.get("tools"))
        prompt_ids = fake_tokenize(prompt_text)
        max_tokens = req.get("max_tokens") or req.get("max_completion_tokens")
        if self.max_context is not None and len(prompt_ids) + (max_tokens or 1) > self.max_context:
            raise ServedError(
                400, _context_message(len(prompt_ids), max_tokens or 1, self.max_context)
            )
        digest = hashlib.sha256(prompt_text.encode()).hexdigest()[:16]
        calls = [
            {
                "id": f"chatcmpl-tool-{digest}{k}",
                "type": "function",
                "function": {
                    "name": c.name,
                    "arguments": (c.arguments_text()[:-1] or "{")
                    if malformed
                    else c.arguments_text(),
                },
            }
            for k, c in enumerate(reply.tool_calls)
        ]
        content = reply.content
        if malformed and not calls:
            content = (content or "") + '<tool_call>{"name": "x", "arguments": {'
        finish = reply.finish_reason or ("tool_calls" if calls else "stop")
        completion_ids = fake_tokenize(render_completion(content, calls))
        if max_tokens is not None and len(completion_ids) > max_tokens:
            completion_ids = completion_ids[:max_tokens]
            content = bytes(completion_ids).decode("utf-8", errors="ignore")
            calls, finish = [], "length"
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": content, "tool_calls": calls},
            "logprobs": None,
            "finish_reason": finish,
            "stop_reason": None,
        }
        if req.get("logprobs"):
            choice["logprobs"] = {
                "content": _logprobs(
                    completion_ids,
                    int(req.get("top_logprobs") or 0),
                    bool(req.get("return_tokens_as_token_ids")),
                )
            }
        out: dict[str, Any] = {
            "id": f"chatcmpl-{digest}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": req.get("model") or self.model,
            "choices": [choice],
            "usage": {
                "prompt_tokens": len(prompt_ids),
                "completion_tokens": len(completion_ids),
                "total_tokens": len(prompt_ids) + len(completion_ids),
            },
            "prompt_logprobs": None,
        }
        if req.get("return_token_ids") and self.serve_prompt_ids:
            out["prompt_token_ids"] = prompt_ids
        if req.get("return_token_ids") and self.serve_completion_ids:
            choice["token_ids"] = completion_ids
        return out


def _logprobs(ids: list[int], top: int, as_ids: bool) -> list[dict[str, Any]]:
    def entry(tid: int, pos: int) -> dict[str, Any]:
        token = f"token_id:{tid}" if as_ids else bytes([tid]).decode("latin-1")
        return {"token": token, "logprob": fake_logprob(tid, pos), "bytes": [tid]}

    return [
        {**entry(t, i), "top_logprobs": [entry((t + j) % 256, i) for j in range(top)]}
        for i, t in enumerate(ids)
    ]


def _context_message(prompt: int, completion: int, limit: int | None = None) -> str:
    limit = limit if limit is not None else prompt
    return (
        f"This model's maximum context length is {limit} tokens. However, you requested "
        f"{prompt + completion} tokens ({prompt} in the messages, {completion} in the "
        "completion). Please reduce the length of the messages or completion."
    )


def _error(status: int, message: str, code: str | None = None) -> web.Response:
    kind = {400: "BadRequestError", 429: "RateLimitError"}.get(status, "InternalServerError")
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return web.json_response(body, status=status)


def _abort(request: web.Request) -> None:
    if request.transport is not None:
        request.transport.abort()


def main(argv: Sequence[str] | None = None) -> None:
    """Run a standalone server; prints ``PORT <n>`` and serves until stdin closes. It
    answers with fixed text, or with ``--responder MODULE:FACTORY``'s ``FACTORY(*ARGS)``."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--reply-chars", type=int, default=200, help="length of each reply")
    ap.add_argument("--responder", metavar="MODULE:FACTORY", help="FACTORY(*ARGS) answers")
    ap.add_argument("--responder-arg", metavar="ARG", action="append", default=[], dest="args")
    args = ap.parse_args(argv)
    text = ("The answer is 42. " * (args.reply_chars // 18 + 1))[: args.reply_chars]
    responder: Responder = lambda _req: text  # noqa: E731
    if args.responder:
        module, _, name = args.responder.partition(":")
        responder = getattr(importlib.import_module(module), name)(*args.args)
    server = OpenAITestServer(
        responder, latency=args.latency, port=args.port, record=False, cache=True
    )
    with server:
        print(f"PORT {server.port}", flush=True)
        import sys

        sys.stdin.read()


if __name__ == "__main__":
    main()
