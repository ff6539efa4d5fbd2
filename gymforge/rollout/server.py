"""What the two server policies share: settings, the SDK client, retries and error mapping.

``openai:MODEL`` (:mod:`gymforge.rollout.openai_policy`, chat messages) and ``vllm:MODEL``
(:mod:`gymforge.rollout.vllm_policy`, token ids) talk to an OpenAI-compatible server through
the official ``openai`` SDK. Everything about *how* they talk lives here, once:

- :class:`Sampling` and :class:`Retry` settings, and :func:`split_settings`, which sorts CLI
  and keyword settings into them;
- :class:`ServerFactory`: one ``AsyncOpenAI`` client (one connection pool) per event loop,
  the **weight version** a trainer bumps mid-run, picklable for Ray;
- :func:`call_with_retries`: connection errors, timeouts, 408, 429 and 5xx retried with
  exponential backoff and seeded jitter, each attempt bounded by ``call_timeout``; then
  :class:`PolicyServerError` (retries exhausted), :class:`PolicyRequestRejected` (another
  4xx: configuration) or ``ContextLengthExceeded`` (the context is full, in any engine's
  wording (:mod:`gymforge.rollout.context_full`): a truncation, with the prompt's token
  count parsed from the message);
- :func:`post_json`: the SDK's documented generic ``client.post`` decoded with ``jiter``
  (about a third of the client CPU of the typed resource methods).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import random
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import jiter
import openai

from gymforge.core.errors import ContextLengthExceeded, InfraError, UserError
from gymforge.rollout.context_full import is_context_full, prompt_tokens
from gymforge.rollout.json_http import JsonHttp
from gymforge.settings import openai_api_key

try:  # the SDK's HTTP library: httpx2 in openai>=3, httpx before
    import httpx2 as _http
except ImportError:  # pragma: no cover
    import httpx as _http  # type: ignore[no-redef]

HTTP = _http
"""The SDK's HTTP library (its ``create_ssl_context`` is the TLS context its transports use)."""

try:
    import aiohttp  # noqa: F401  (the SDK's optional transport)

    _HAVE_AIOHTTP = True
except ImportError:  # pragma: no cover
    _HAVE_AIOHTTP = False

Transport = Literal["httpx", "aiohttp"]
WeightVersion = str | Callable[[], str | None] | None
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
    every request last (e.g. ``{"top_k": 20}``).

    ``parallel_tool_calls`` is not sent unless set. Sending it is an explicit opt-in with a
    cost: with vLLM's hermes tool parser it switches on a tool-call grammar whose forced
    tokens are not canonical tokenisations (the next turn's re-rendered prompt no longer
    extends the last one, so the TRL export refuses the episode) and whose recorded logprobs
    are not the sampling probabilities. gymforge asks for one call per turn anyway: more
    than one is ``Invalid`` (:mod:`gymforge.rollout.parsing`)."""

    temperature: float | None = 1.0
    top_p: float | None = None
    max_tokens: int | None = None
    stop: tuple[str, ...] | None = None
    logprobs: bool = True
    top_logprobs: int | None = None
    return_token_ids: bool = True
    parallel_tool_calls: bool | None = None
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


class ServerFactory:
    """The client, settings and weight version shared by one run's policies.

    ``weight_version`` is a string, ``None``, or a zero-argument callable read at every
    request; assign ``factory.weight_version = "v42"`` to bump it mid-run. ``api_key``
    defaults to ``$OPENAI_API_KEY``, then to a placeholder (local servers ignore it).
    ``transport="aiohttp"`` (the default when ``aiohttp`` is installed) uses the SDK's
    ``DefaultAioHttpClient``; ``"httpx"`` its default httpx client."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        sampling: Sampling | None = None,
        retry: Retry | None = None,
        transport: Transport | None = None,
        max_connections: int = 4096,
        checkpoint: str | None = None,
        weight_version: WeightVersion = None,
    ) -> None:
        if sampling is not None and sampling.max_tokens is not None and sampling.max_tokens < 1:
            raise UserError(f"--max-tokens must be at least 1, got {sampling.max_tokens}")
        self.model = model
        self.base_url = base_url
        self.api_key = api_key or openai_api_key() or "EMPTY"
        self.sampling = sampling or Sampling()
        self.retry = retry or Retry()
        self.transport: Transport = transport or ("aiohttp" if _HAVE_AIOHTTP else "httpx")
        self.max_connections = max_connections
        self.checkpoint = checkpoint or model
        self.weight_version: WeightVersion = weight_version
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, openai.AsyncOpenAI]
        self._clients = weakref.WeakKeyDictionary()

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

    async def __aenter__(self) -> ServerFactory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __getstate__(self) -> dict[str, Any]:  # picklable for Ray: clients stay behind
        return {**self.__dict__, "_clients": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._clients = weakref.WeakKeyDictionary()


class BadResponse(Exception):
    """A 2xx response that is not what was asked for: retried like a server error."""


Rejection = Callable[[int, str], str]
"""``(status, server message) -> hint`` appended to a :class:`PolicyRequestRejected`."""

Backoff = random.Random | Callable[[], random.Random]
"""The seeded generator of the retry delays' jitter, or a callable that returns it (called
only when a retry waits: most episodes never retry, and need not seed one)."""


async def call_with_retries(
    factory: ServerFactory,
    rng: Backoff,
    send: Callable[[], Awaitable[dict[str, Any]]],
    hint: Rejection | None = None,
) -> tuple[dict[str, Any], str | None]:
    """``await send()`` with the retry policy: the decoded response and the weight version
    read when the successful attempt was sent (see the module docstring)."""
    retry = factory.retry
    where = factory.base_url or "server"
    last = "no attempt made"
    status: int | None = None
    for attempt in range(retry.max_attempts):
        version = factory.current_weight_version()
        retry_after: float | None = None
        try:
            async with asyncio.timeout(retry.call_timeout):
                return await send(), version
        except TimeoutError:
            last, status = f"no response within {retry.call_timeout} s", None
        except openai.APIStatusError as err:
            status = err.status_code
            message = error_message(err)
            if is_context_full(status, message, err.code):
                raise ContextLengthExceeded(
                    message[:500], prompt_tokens=prompt_tokens(message)
                ) from err
            if status not in RETRY_STATUS and status < 500:
                extra = hint(status, message) if hint is not None else ""
                raise PolicyRequestRejected(
                    f"{where} refused the request ({status}): {message[:500]}{extra}",
                    status=status,
                ) from err
            last, retry_after = f"HTTP {status}: {message[:300]}", _retry_after(err)
        except openai.APIConnectionError as err:  # includes the SDK's timeouts
            last, status = f"{type(err).__name__}: {err}{_root_cause(err)}", None
        except BadResponse as err:
            last, status = str(err), None
        if attempt + 1 < retry.max_attempts:
            jitter = rng if isinstance(rng, random.Random) else rng()
            await asyncio.sleep(retry.delay(attempt, jitter, retry_after))
    raise PolicyServerError(
        f"{where} failed {retry.max_attempts} attempts; last: {last}", status=status
    )


async def post_json(
    client: openai.AsyncOpenAI, path: str, body: dict[str, Any] | bytes, timeout: float
) -> Any:
    """POST ``body`` (a JSON object, or its encoding as bytes) to ``path`` (relative to the
    base URL, or absolute) and decode the JSON answer; :class:`BadResponse` if it is not
    JSON."""
    options: Any = {"timeout": timeout}
    if isinstance(body, bytes):  # sent as they are, with the SDK's JSON content type
        response = await client.post(path, content=body, cast_to=_http.Response, options=options)
    else:
        response = await client.post(path, body=body, cast_to=_http.Response, options=options)
    try:
        return decode_json(response.content)
    except ValueError as err:
        raise BadResponse(f"response is not JSON: {err}") from err


async def post_json_lean(
    http: JsonHttp, url: str, path: str, body: dict[str, Any], timeout: float | None
) -> Any:
    """``post_json`` over gymforge's lean keep-alive client (``json_http``) instead of the
    SDK's: the same request, a fraction of the client CPU, and every failure raised as the
    SDK raises it, so ``call_with_retries`` treats them alike: a failed connection is
    ``APIConnectionError``; an error status the SDK's class for it (``RateLimitError``,
    ``InternalServerError``, ...) with the SDK's message, body (the ``error`` object) and
    the response's headers (``Retry-After``) (:func:`status_error`); a 2xx that is not
    JSON ``BadResponse``. ``timeout=None``: no bound of its own (``call_with_retries``
    bounds each attempt)."""
    try:
        status, headers, content = await http.exchange(path, encode_body(body), timeout)
    except (OSError, EOFError) as err:
        raise openai.APIConnectionError(request=_http.Request("POST", url + path)) from err
    if status >= 400:
        raise status_error(status, headers, content, url + path)
    try:
        return decode_json(content)
    except ValueError as err:
        raise BadResponse(f"response is not JSON: {err}") from err


def decode_json(content: bytes) -> Any:
    """A response body decoded by ``jiter``, caching only object keys: a reply's logprob
    entries repeat a few keys hundreds of times, while their token strings are mostly
    distinct (caching those too costs about a sixth more). The values are the same either
    way; ``ValueError`` if it is not JSON. (``orjson`` decodes a reply in about two thirds
    of the time but is not the same decoder: it reads integers past 64 bits as floats and
    accepts nesting 201 to 1,024 deep, which ``jiter`` refuses; proving a body free of
    both takes a scan as costly as the time saved, since a reply's logprob entries alone
    hold hundreds of brackets.)"""
    return jiter.from_json(content, cache_mode="keys")


_BODY = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def encode_body(body: dict[str, Any]) -> bytes:
    """A request body's bytes as the SDK encodes them (its ``openapi_dumps``: compact,
    UTF-8, NaN refused), so both paths send the same bytes."""
    return _BODY.encode(body).encode()


_STATUS_ERRORS: dict[int, type[openai.APIStatusError]] = {
    400: openai.BadRequestError,
    401: openai.AuthenticationError,
    403: openai.PermissionDeniedError,
    404: openai.NotFoundError,
    409: openai.ConflictError,
    422: openai.UnprocessableEntityError,
    429: openai.RateLimitError,
}


def status_error(
    status: int, headers: Mapping[str, str], content: bytes, url: str
) -> openai.APIStatusError:
    """The error the SDK raises for an error response (its
    ``_make_status_error_from_response``): the class by status, the message ``Error code:
    N`` (`` - <message>`` when the body carries one), ``body`` the decoded body's ``error``
    object (or the body, or its text when it is not JSON), so ``code`` and ``param`` are
    read as the SDK reads them."""
    request = _http.Request("POST", url)  # built on failure only: it parses the URL
    response = _http.Response(status, headers=dict(headers), content=content, request=request)
    message = f"Error code: {status}"
    decoded: object = response.text.strip()
    try:
        decoded = json.loads(str(decoded))
    except ValueError:
        pass
    else:
        error = decoded.get("error", decoded) if isinstance(decoded, Mapping) else None
        text = error.get("message") if isinstance(error, Mapping) else None
        if isinstance(text, str) and text:
            message += f" - {text}"
    data = decoded.get("error", decoded) if isinstance(decoded, Mapping) else decoded
    kind = _STATUS_ERRORS.get(status, openai.InternalServerError if status >= 500 else None)
    return (kind or openai.APIStatusError)(message, response=response, body=data)


def first_choice(data: Any) -> dict[str, Any]:
    """``data`` itself when it has a non-empty ``choices`` list of objects, else BadResponse."""
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise BadResponse(f"response has no choices: {str(data)[:200]}")
    return dict(data)


def error_message(err: openai.APIStatusError) -> str:
    body = err.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else None
        if isinstance(message, str):
            return message
        detail = body.get("detail")  # FastAPI's own errors (404, 422)
        if detail is not None:
            return str(detail)
    return str(err.message)


def _root_cause(err: BaseException) -> str:
    """`` (cause: ...)`` naming the innermost exception under the SDK's (whose
    aiohttp transport reports a refused connection as a timeout)."""
    root, seen = err, {id(err)}
    while (nxt := root.__cause__ or root.__context__) is not None and id(nxt) not in seen:
        root = nxt
        seen.add(id(root))
    return "" if root is err else f" (cause: {type(root).__name__}: {str(root)[:200]})"


def _retry_after(err: openai.APIStatusError) -> float | None:
    try:
        return float(err.response.headers.get("retry-after", ""))
    except (TypeError, ValueError):
        return None


def split_settings(
    settings: Mapping[str, Any], factory_cls: type, label: str
) -> tuple[Sampling, Retry, dict[str, Any]]:
    """Sort ``settings`` into :class:`Sampling`, :class:`Retry` and ``factory_cls`` keyword
    options, converting CLI strings by annotation. ``None`` values are ignored (unset CLI
    flags pass through); an unknown key is a ``UserError`` naming the known ones."""
    groups: dict[str, dict[str, Any]] = {"sampling": {}, "retry": {}, "factory": {}}
    types = {
        **{k: ("sampling", f.type) for k, f in Sampling.__dataclass_fields__.items()},
        **{k: ("retry", f.type) for k, f in Retry.__dataclass_fields__.items()},
        **{
            k: ("factory", str(p.annotation))
            for cls in reversed(factory_cls.__mro__)
            if "__init__" in cls.__dict__ and cls is not object
            for k, p in inspect.signature(cls.__dict__["__init__"]).parameters.items()
            if k not in ("self", "model", "base_url", "sampling", "retry")
            and p.kind is not p.VAR_KEYWORD
        },
    }
    for key, value in settings.items():
        if value is None:
            continue
        if key not in types:
            raise UserError(f"unknown {label} setting {key!r}; known: {', '.join(sorted(types))}")
        group, kind = types[key]
        groups[group][key] = _coerce(str(kind), value)
    return Sampling(**groups["sampling"]), Retry(**groups["retry"]), groups["factory"]


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
