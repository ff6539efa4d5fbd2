"""``OpenAIPolicy``: a model behind any OpenAI-compatible chat server, via the ``openai`` SDK.

Build policies with :class:`OpenAIPolicyFactory` (or :func:`make_openai_policy_factory` from
a CLI spec). The factory owns one ``AsyncOpenAI`` client (one connection pool) per event
loop, the sampling and retry settings, and the **weight version** a trainer bumps mid-run.
The runner calls ``factory()`` once per episode and ``await factory.aclose()`` at the end.

Per episode the policy keeps the whole conversation: each ``act`` appends the observation's
new messages, sends the transcript (with ``tools`` from the reset observation), and appends
its own assistant turn (``gymforge.rollout.parsing``), so every request is the exact
transcript so far. ``seed`` is ``EpisodeContext.sampling_seed``, so the rollouts of a group
differ deterministically.

**Token capture.** Requests ask for ``logprobs`` and vLLM's ``return_token_ids``. Each turn
records ``prompt_token_ids``, ``completion_token_ids``, ``logprobs``, ``finish_reason``,
``model`` exactly as returned (never re-tokenised; rules and ``capture_level`` in
:func:`gymforge.rollout.parsing.capture_fields`), and the weight version read when the
successful request was sent.

**Failures.** Connection errors, timeouts, 408, 429 and 5xx are retried with exponential
backoff and seeded jitter; ``call_timeout`` bounds each attempt. Then the policy raises
:class:`PolicyServerError` (retries exhausted), :class:`PolicyRequestRejected` (another
4xx: configuration) or :class:`ContextLengthExceeded` (the transcript outgrew the model's
context: a truncation). Their docstrings say what the runner should do.

**Request path.** ``"fast"`` (default) sends the body with the SDK's documented generic
``client.post`` and decodes it with ``jiter`` (an SDK dependency); ``"typed"`` uses
``client.chat.completions.create``. Both use the SDK's auth, base URL, timeouts, pool and
error classes, and record the same fields; the typed path costs about 3x the client CPU per
call (TypedDict transforms of the whole transcript, response models), which caps
concurrency on a small host (``benchmarks/openai_concurrency.py``).
"""

from __future__ import annotations

import asyncio
import inspect
import os
import random
import re
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import jiter
import openai

from gymforge.core.errors import ContextLengthExceeded, InfraError, UserError
from gymforge.core.seeding import derive_seed
from gymforge.core.types import Message, Observation
from gymforge.rollout.parsing import turn_from_response
from gymforge.rollout.policy import EpisodeContext, PolicyTurn

try:  # the SDK's HTTP library: httpx2 in openai>=3, httpx before
    import httpx2 as _http
except ImportError:  # pragma: no cover
    import httpx as _http  # type: ignore[no-redef]

try:
    import aiohttp  # noqa: F401  (the SDK's optional transport)

    _HAVE_AIOHTTP = True
except ImportError:  # pragma: no cover
    _HAVE_AIOHTTP = False

Transport = Literal["httpx", "aiohttp"]
WeightVersion = str | Callable[[], str | None] | None
_CONTEXT = re.compile(r"context[ _]length|context window|maximum context|too many tokens", re.I)
_PROMPT_TOKENS = re.compile(r"(\d+) (?:tokens )?in the messages|has (\d+) input tokens")
RETRY_STATUS = frozenset({408, 429})


class PolicyServerError(InfraError):
    """The inference server kept failing (connection, timeout, 429, 5xx) after all retries.
    Transient: retry the episode later; never score it."""

    retryable = True

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status

    def __reduce__(self) -> tuple[Any, ...]:  # picklable with its attributes (Ray)
        return (type(self), (str(self),), self.__dict__)


class PolicyRequestRejected(PolicyServerError):
    """The server refused the request with a 4xx other than 429 and context length (bad
    model name, bad key, unsupported parameter). Retrying will not help: stop the run."""

    retryable = False


@dataclass(frozen=True)
class Sampling:
    """Request settings. ``None`` leaves a setting to the server's default.

    ``return_token_ids`` adds vLLM's ``return_token_ids`` to the body (turn it off for
    servers that refuse unknown fields, such as hosted APIs); ``extra_body`` is merged into
    every request last (e.g. ``{"top_k": 20}``)."""

    temperature: float | None = 1.0
    top_p: float | None = None
    max_tokens: int | None = None
    stop: tuple[str, ...] | None = None
    logprobs: bool = True
    top_logprobs: int | None = None
    return_token_ids: bool = True
    parallel_tool_calls: bool | None = False
    extra_body: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Retry:
    """``max_attempts`` tries per call, each bounded by ``call_timeout`` seconds; between
    tries ``min(max_delay, base_delay * 2**k)`` scaled by a seeded factor in [0.5, 1)."""

    max_attempts: int = 6
    base_delay: float = 0.5
    max_delay: float = 8.0
    call_timeout: float = 300.0

    def delay(self, attempt: int, rng: random.Random, retry_after: float | None = None) -> float:
        d: float = min(self.max_delay, self.base_delay * 2**attempt) * (0.5 + rng.random() / 2)
        if retry_after is not None:
            d = max(d, min(retry_after, self.max_delay))
        return d


class OpenAIPolicyFactory:
    """Makes :class:`OpenAIPolicy` objects that share one client and one weight version.

    ``weight_version`` is a string, ``None``, or a zero-argument callable read at every
    request; assign ``factory.weight_version = "v42"`` to bump it mid-run. ``api_key``
    defaults to ``$OPENAI_API_KEY``, then to a placeholder (local servers ignore it).
    ``transport="aiohttp"`` (the default when ``aiohttp`` is installed) uses the SDK's
    ``DefaultAioHttpClient``; ``"httpx"`` its default httpx client.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        sampling: Sampling | None = None,
        retry: Retry | None = None,
        transport: Transport | None = None,
        request_path: Literal["fast", "typed"] = "fast",
        max_connections: int = 4096,
        checkpoint: str | None = None,
        weight_version: WeightVersion = None,
        text_tool_calls: bool = True,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.api_key = api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY"
        self.sampling = sampling or Sampling()
        self.retry = retry or Retry()
        self.transport: Transport = transport or ("aiohttp" if _HAVE_AIOHTTP else "httpx")
        self.request_path = request_path
        self.max_connections = max_connections
        self.checkpoint = checkpoint or model
        self.weight_version: WeightVersion = weight_version
        self.text_tool_calls = text_tool_calls
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, openai.AsyncOpenAI]
        self._clients = weakref.WeakKeyDictionary()

    def __call__(self) -> OpenAIPolicy:
        return OpenAIPolicy(self)

    def current_weight_version(self) -> str | None:
        v = self.weight_version
        v = v() if callable(v) else v
        return None if v is None else str(v)

    def client(self) -> openai.AsyncOpenAI:
        """The running event loop's client, created on first use."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            limits = _http.Limits(
                max_connections=self.max_connections,
                max_keepalive_connections=self.max_connections,
            )
            if self.transport == "aiohttp":
                http: Any = openai.DefaultAioHttpClient(limits=limits)
            else:
                http = openai.DefaultAsyncHttpxClient(limits=limits)
            client = openai.AsyncOpenAI(
                base_url=self.base_url,
                api_key=self.api_key,
                max_retries=0,  # retries are ours: seeded backoff, typed errors
                timeout=self.retry.call_timeout,
                http_client=http,
            )
            self._clients[loop] = client
        return client

    async def aclose(self) -> None:
        """Close the running loop's client (its connection pool)."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    async def __aenter__(self) -> OpenAIPolicyFactory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __getstate__(self) -> dict[str, Any]:  # picklable for Ray: clients stay behind
        return {**self.__dict__, "_clients": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._clients = weakref.WeakKeyDictionary()


class OpenAIPolicy:
    """One episode's conversation with the model. Made by :class:`OpenAIPolicyFactory`."""

    def __init__(self, factory: OpenAIPolicyFactory) -> None:
        self.factory = factory
        self.name = f"openai:{factory.model}"
        self.checkpoint = factory.checkpoint
        self.messages: list[dict[str, Any]] = []
        self.tools: list[dict[str, Any]] = []
        self.turns = 0
        self._seed = 0
        self._rng = random.Random(0)

    @property
    def weight_version(self) -> str | None:
        return self.factory.current_weight_version()

    async def start(self, ctx: EpisodeContext) -> None:
        self.messages, self.tools, self.turns = [], [], 0
        self._seed = ctx.sampling_seed
        self._rng = random.Random(
            derive_seed("openai-policy-backoff", ctx.task_id, ctx.seed, ctx.sampling_seed)
        )

    async def act(self, observation: Observation) -> PolicyTurn:
        if observation.tools:
            self.tools = [dict(t) for t in observation.tools]
        self.messages.extend(message_dict(m) for m in observation.messages)
        data, version = await self._complete(self.request_body())
        self.turns += 1
        turn, assistant = turn_from_response(
            data, version, f"call_{self.turns}", self.factory.text_tool_calls
        )
        self.messages.append(assistant)
        return turn

    def request_body(self) -> dict[str, Any]:
        """The JSON body of the next request: the transcript so far plus sampling."""
        s = self.factory.sampling
        body: dict[str, Any] = {"model": self.factory.model, "messages": self.messages}
        if self.tools:
            body["tools"] = self.tools
            if s.parallel_tool_calls is not None:
                body["parallel_tool_calls"] = s.parallel_tool_calls
        body["seed"] = self._seed
        optional = {
            "temperature": s.temperature,
            "top_p": s.top_p,
            "max_tokens": s.max_tokens,
            "stop": list(s.stop) if s.stop else None,
            "top_logprobs": s.top_logprobs if s.logprobs else None,
        }
        body.update((k, v) for k, v in optional.items() if v is not None)
        if s.logprobs:
            body["logprobs"] = True
        if s.return_token_ids:
            body["return_token_ids"] = True
        body.update(s.extra_body)
        return body

    async def _complete(self, body: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
        """POST with retries: the decoded response and the weight version it was sent at."""
        retry = self.factory.retry
        last = "no attempt made"
        status: int | None = None
        for attempt in range(retry.max_attempts):
            version = self.factory.current_weight_version()
            retry_after: float | None = None
            try:
                async with asyncio.timeout(retry.call_timeout):
                    return await self._send(body), version
            except TimeoutError:
                last, status = f"no response within {retry.call_timeout} s", None
            except openai.APIStatusError as err:
                status = err.status_code
                message = _error_message(err)
                if status == 400 and (
                    _CONTEXT.search(message) or err.code == "context_length_exceeded"
                ):
                    raise ContextLengthExceeded(
                        message[:500], prompt_tokens=_prompt_tokens(message)
                    ) from err
                if status not in RETRY_STATUS and status < 500:
                    hint = ""
                    if "return_token_ids" in message or "logprobs" in message:
                        hint = " (a server without vLLM's fields: set return_token_ids=False)"
                    raise PolicyRequestRejected(
                        f"{self.factory.base_url or 'server'} refused the request "
                        f"({status}): {message[:500]}{hint}",
                        status=status,
                    ) from err
                last, retry_after = f"HTTP {status}: {message[:300]}", _retry_after(err)
            except openai.APIConnectionError as err:  # includes the SDK's timeouts
                last, status = f"{type(err).__name__}: {err}{_root_cause(err)}", None
            except _BadResponse as err:
                last, status = str(err), None
            if attempt + 1 < retry.max_attempts:
                await asyncio.sleep(retry.delay(attempt, self._rng, retry_after))
        raise PolicyServerError(
            f"{self.factory.base_url or 'server'} failed {retry.max_attempts} attempts; "
            f"last: {last}",
            status=status,
        )

    async def _send(self, body: dict[str, Any]) -> dict[str, Any]:
        client = self.factory.client()
        timeout = self.factory.retry.call_timeout
        if self.factory.request_path == "typed":
            params = {k: v for k, v in body.items() if k in _TYPED_PARAMS}
            extra = {k: v for k, v in body.items() if k not in _TYPED_PARAMS}
            completion = await client.chat.completions.create(
                **params, extra_body=extra or None, timeout=timeout
            )
            data: Any = completion.model_dump(mode="json", exclude_unset=True)
        else:
            response = await client.post(
                "/chat/completions",
                body=body,
                cast_to=_http.Response,
                options={"timeout": timeout},
            )
            try:
                data = jiter.from_json(response.content)
            except ValueError as err:
                raise _BadResponse(f"response is not JSON: {err}") from err
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise _BadResponse(f"response has no choices: {str(data)[:200]}")
        return dict(data)


_TYPED_PARAMS = frozenset(
    inspect.signature(openai.resources.chat.AsyncCompletions.create).parameters
) - {"self", "extra_body", "extra_headers", "extra_query", "timeout"}


class _BadResponse(Exception):
    """A 2xx response that is not a chat completion: retried like a server error."""


def message_dict(m: Message) -> dict[str, Any]:
    """An observation message in OpenAI request shape (tool results carry their call id)."""
    if m.role == "tool":
        return {"role": "tool", "content": m.content, "tool_call_id": m.tool_call_id or ""}
    out: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.name:
        out["name"] = m.name
    return out


def _error_message(err: openai.APIStatusError) -> str:
    body = err.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else None
        if isinstance(message, str):
            return message
    return str(err.message)


def _root_cause(err: BaseException) -> str:
    """`` (cause: ...)`` naming the innermost exception under the SDK's (whose
    aiohttp transport reports a refused connection as a timeout)."""
    root, seen = err, {id(err)}
    while (nxt := root.__cause__ or root.__context__) is not None and id(nxt) not in seen:
        root = nxt
        seen.add(id(root))
    return "" if root is err else f" (cause: {type(root).__name__}: {str(root)[:200]})"


def _prompt_tokens(message: str) -> int | None:
    m = _PROMPT_TOKENS.search(message)
    return int(m.group(1) or m.group(2)) if m else None


def _retry_after(err: openai.APIStatusError) -> float | None:
    try:
        return float(err.response.headers.get("retry-after", ""))
    except (TypeError, ValueError):
        return None


def make_openai_policy_factory(
    spec: str, base_url: str | None = None, **settings: Any
) -> OpenAIPolicyFactory:
    """The factory for a CLI spec ``openai:MODEL`` (``MODEL`` may contain ``:`` and ``/``).

    ``settings`` are :class:`Sampling` fields (``temperature``, ``max_tokens``, ``stop``,
    ``return_token_ids``, ``extra_body``, ...) plus factory options (``transport``,
    ``request_path``, ``checkpoint``, ``weight_version``, ``api_key``, ``max_connections``,
    ``text_tool_calls``) and :class:`Retry` fields (``max_attempts``, ``call_timeout``...).
    ``None`` values are ignored, so unset CLI flags can be passed through. UserError for a
    bad spec or an unknown setting.
    """
    kind, _, model = spec.partition(":")
    if kind != "openai" or not model:
        raise UserError(f"policy spec must look like openai:MODEL, got {spec!r}")
    groups: dict[str, dict[str, Any]] = {"sampling": {}, "retry": {}, "factory": {}}
    types = {
        **{k: ("sampling", f.type) for k, f in Sampling.__dataclass_fields__.items()},
        **{k: ("retry", f.type) for k, f in Retry.__dataclass_fields__.items()},
        **{
            k: ("factory", str(p.annotation))
            for k, p in inspect.signature(OpenAIPolicyFactory).parameters.items()
            if k not in ("model", "base_url", "sampling", "retry")
        },
    }
    for key, value in settings.items():
        if value is None:
            continue
        if key not in types:
            raise UserError(
                f"unknown openai policy setting {key!r}; known: {', '.join(sorted(types))}"
            )
        group, kind = types[key]
        groups[group][key] = _coerce(str(kind), value)
    return OpenAIPolicyFactory(
        model,
        base_url=base_url,
        sampling=Sampling(**groups["sampling"]),
        retry=Retry(**groups["retry"]),
        **groups["factory"],
    )


def _coerce(kind: str, value: Any) -> Any:
    """A CLI string (or list) as the type a setting's annotation ``kind`` names."""
    if kind.startswith("tuple"):
        return (value,) if isinstance(value, str) else tuple(value)
    if not isinstance(value, str):
        return value
    if kind.startswith("int"):
        return int(value)
    if kind.startswith("float"):
        return float(value)
    if kind.startswith("bool"):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return value
