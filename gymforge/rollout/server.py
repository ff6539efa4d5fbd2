"""What the two server policies share: settings, the SDK client, retries and error mapping.

``openai:MODEL`` (:mod:`gymforge.rollout.openai_policy`, chat messages) and ``vllm:MODEL``
(:mod:`gymforge.rollout.vllm_policy`, token ids) talk to an OpenAI-compatible server through
the official ``openai`` SDK. Everything about *how* they talk lives here (and in the two
modules beside it, whose names are imported from here too), once:

- :class:`Sampling` and :class:`Retry` settings, and :func:`split_settings`, which sorts CLI
  and keyword settings into them (:mod:`gymforge.rollout.server_settings`);
- :class:`ServerFactory`: one ``AsyncOpenAI`` client (one connection pool) per event loop,
  the **weight version** a trainer bumps mid-run, picklable for Ray;
- :func:`call_with_retries`: connection errors, timeouts, 408, 429 and 5xx retried with
  exponential backoff and seeded jitter, each attempt bounded by ``call_timeout``; then
  :class:`PolicyServerError` (retries exhausted; :class:`PolicyTimedOut` when every attempt
  ran past ``call_timeout`` or a gateway's timeout (:data:`TIMEOUT_STATUS`): for a model
  turn, :mod:`gymforge.rollout.liveness` says whether the server was answering
  meanwhile), :class:`PolicyRequestRejected` (another 4xx: configuration) or
  ``ContextLengthExceeded`` (the context is full, in any engine's wording, or the body is
  over a 413's limit (:mod:`gymforge.rollout.context_full`): a truncation, with the
  prompt's token count parsed from the message);
- :func:`post_json` and :func:`post_json_lean`, the requests themselves, and the rest of
  the HTTP exchange (:mod:`gymforge.rollout.server_http`);
- the base URL's checks before any request, :func:`refuse_unusable` and
  :func:`sdk_only_reason` (:mod:`gymforge.rollout.base_url`).
"""

from __future__ import annotations

import asyncio
import logging
import random
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeVar

import openai

from gymforge.core.errors import ContextLengthExceeded, InfraError, TurnTimedOut, UserError
from gymforge.rollout.base_url import refuse_unusable, sdk_only_reason
from gymforge.rollout.context_full import is_context_full, prompt_tokens
from gymforge.rollout.deadlines import within
from gymforge.rollout.json_http import JsonHttp
from gymforge.rollout.server_http import (
    HTTP,
    BadResponse,
    SdkOnly,
    decode_json,
    encode_body,
    first_choice,
    post_json,
    post_json_lean,
    status_error,
)
from gymforge.rollout.server_settings import Retry, Sampling, split_settings
from gymforge.settings import openai_api_key, openai_base_url

__all__ = [
    "HTTP",
    "RETRY_STATUS",
    "TIMEOUT_STATUS",
    "Backoff",
    "BadResponse",
    "PolicyRequestRejected",
    "PolicyServerError",
    "PolicyTimedOut",
    "Rejection",
    "RequestPath",
    "Retry",
    "Sampling",
    "ServerFactory",
    "Transport",
    "WeightVersion",
    "call_with_retries",
    "decode_json",
    "encode_body",
    "error_message",
    "first_choice",
    "post_json",
    "post_json_lean",
    "refuse_unusable",
    "sdk_only_reason",
    "split_settings",
    "status_error",
]

try:
    import aiohttp  # noqa: F401  (the SDK's optional transport)

    _HAVE_AIOHTTP = True
except ImportError:  # pragma: no cover
    _HAVE_AIOHTTP = False

Transport = Literal["httpx", "aiohttp"]
RequestPath = Literal["auto", "fast", "typed", "lean"]
log = logging.getLogger("gymforge.server_policy")
WeightVersion = str | Callable[[], str | None] | None
RETRY_STATUS = frozenset({408, 429})
TIMEOUT_STATUS = frozenset({408, 504, 524})
"""A timeout someone else's clock called: a gateway's or load balancer's read timeout in
front of the server (504, Cloudflare's 524, a 408), shorter than ``call_timeout``. An
attempt answered so ran past its time as one the client gave up on did: every attempt so
is a :class:`PolicyTimedOut`, judged a long answer or a stall as any
(:mod:`gymforge.rollout.liveness`), never a failing server."""


class PolicyServerError(InfraError):
    """The inference server kept failing (connection, timeout, 429, 5xx) after all retries.
    Transient: retry the episode later; never score it."""

    retryable = True

    def __init__(self, message: str, *, status: int | None = None, detail: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.detail = detail
        """The server's own words, without where it is (what a relay may pass on)."""

    def __reduce__(self) -> tuple[Any, ...]:  # picklable with its attributes (Ray)
        return (type(self), (str(self),), self.__dict__)


class PolicyTimedOut(PolicyServerError, TurnTimedOut):
    """Every attempt ran past ``call_timeout`` without an answer: the episode's counted
    failure after the agent acted, or before when the server was seen answering meanwhile
    (``answering``, set for a model turn by :mod:`gymforge.rollout.liveness`); else a stall,
    retried as infrastructure (``TurnTimedOut``)."""


class PolicyRequestRejected(PolicyServerError):
    """The server refused the request with a 4xx other than 408, 429 and a full context (bad
    model name, bad key, unsupported parameter). Retrying will not help: stop the run."""

    retryable = False


class ServerFactory:
    """The client, settings and weight version shared by one run's policies.

    ``weight_version`` is a string, ``None``, or a zero-argument callable read at every
    request; assign ``factory.weight_version = "v42"`` to bump it mid-run. ``api_key``
    defaults to ``$OPENAI_API_KEY``, then to a placeholder (local servers ignore it).
    ``transport="aiohttp"`` (the default when ``aiohttp`` is installed) uses the SDK's
    ``DefaultAioHttpClient``; ``"httpx"`` its default httpx client. ``request_path`` is how
    requests are sent (:meth:`path`): ``"lean"`` over gymforge's keep-alive JSON client
    (:meth:`lean`) with the SDK client's URL, headers and TLS context and every failure
    raised as the SDK raises it; ``"fast"`` through the SDK's generic ``client.post``;
    ``"auto"`` the lean one unless :func:`sdk_only_reason` says the SDK would do something
    it does not."""

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
        request_path: RequestPath = "auto",
    ) -> None:
        if request_path not in self.PATHS:
            raise UserError(
                f"request_path must be {', '.join(self.PATHS[:-1])} or {self.PATHS[-1]}, "
                f"not {request_path!r}"
            )
        if sampling is not None and sampling.max_tokens is not None and sampling.max_tokens < 1:
            raise UserError(f"--max-tokens must be at least 1, got {sampling.max_tokens}")
        refuse_unusable(base_url or openai_base_url())
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
        self.request_path: RequestPath = request_path
        self._lean: JsonHttp | None = None
        self._lean_url = ""
        self._path: Literal["fast", "typed", "lean"] | None = None
        self.sdk_reason: str | None = None
        """Why ``"auto"`` chose the SDK's path (None: it did not, or nothing was sent yet)."""
        self.turns_answered = 0
        """The model turns the server answered in this process, a monotonic count: whether
        it answered any while a turn timed out tells a long answer from a stall
        (:mod:`gymforge.rollout.liveness`)."""
        self.widest_answered = 0
        """The largest ``max_tokens`` of a model turn answered in this process (0: none
        with a bound): a first turn refused while asking no more was not refused for its
        bound (:mod:`gymforge.rollout.transcript_refusal`)."""

    def bound_accepted(self, tokens: int | None) -> bool:
        """Whether a request asking at most ``tokens`` is known not to be refused for its
        bound: none asked, or no more than a model turn answered asked
        (``widest_answered``); a server's maximum bound (a hosted API's "max_tokens is too
        large") would refuse any answer."""
        return tokens is None or tokens <= self.widest_answered

    PATHS: tuple[RequestPath, ...] = ("auto", "fast", "lean")
    """The request paths this policy has (the chat policy adds ``"typed"``)."""

    def path(self) -> Literal["fast", "typed", "lean"]:
        """The request path in use: ``request_path``, ``"auto"`` decided on first use: the
        lean client unless the SDK would do something it does not (:func:`sdk_only_reason`;
        the reason is then logged once and kept in ``sdk_reason``)."""
        if self._path is None:
            if self.request_path != "auto":
                self._path = self.request_path
            else:
                self.sdk_reason = sdk_only_reason(self.client())
                self._path = "lean" if self.sdk_reason is None else "fast"
                if self.sdk_reason is not None:
                    log.info("%s: the SDK's request path, as %s", self.model, self.sdk_reason)
        return self._path

    def lean(self) -> tuple[JsonHttp, str]:
        """The lean client (its pools are per event loop) and the base URL it posts under:
        the SDK client's, with its headers and TLS context (so ``$OPENAI_BASE_URL``,
        ``$OPENAI_ORG_ID``, ``$OPENAI_PROJECT_ID``, ``$SSL_CERT_FILE`` apply alike)."""
        if self._lean is None:
            client = self.client()
            self._lean_url = str(client.base_url).rstrip("/")
            headers = {
                k: v
                for k, v in {**client.default_headers, **client.auth_headers}.items()
                if isinstance(v, str) and k.lower() not in ("content-type", "host")
            }
            tls = HTTP.create_ssl_context() if self._lean_url.startswith("https:") else None
            self._lean = JsonHttp(self._lean_url, headers, tls, self.max_connections)
        return self._lean, self._lean_url

    async def post(
        self, path: str, body: dict[str, Any] | bytes, read: Callable[[bytes], Read]
    ) -> Read:
        """``body`` posted to ``path`` on the request path in use (:meth:`path`: the lean
        client or the SDK's generic ``client.post``), the answer read by ``read``. An answer
        the lean client does not read as the SDK would (:class:`SdkOnly`: a redirect, a
        coded body) is asked again through the SDK under ``"auto"``, and the factory keeps to
        the SDK's path from then on (the reason logged once and kept in ``sdk_reason``);
        under ``"lean"``, asked for by name, it is a bad answer (retried, as any)."""
        if self.path() == "lean":
            http, url = self.lean()
            try:  # bounded by call_with_retries' timeout: no second timer
                answer: Read = await post_json_lean(http, url, path, body, None, read)
                return answer
            except SdkOnly as err:
                if self.request_path == "lean":
                    raise BadResponse(f"{err}: the lean client does not follow it") from err
                if self._path == "lean":  # once, whatever else is in flight
                    self._path, self.sdk_reason = "fast", str(err)
                    log.info("%s: the SDK's request path, as %s", self.model, self.sdk_reason)
        answer = await post_json(self.client(), path, body, self.retry.call_timeout, read)
        return answer

    def current_weight_version(self) -> str | None:
        v = self.weight_version
        v = v() if callable(v) else v
        return None if v is None else str(v)

    def client(self) -> openai.AsyncOpenAI:
        """The running event loop's client, created on first use."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            limits = HTTP.Limits(
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
        """Close the running loop's clients (their connection pools)."""
        if self._lean is not None:
            await self._lean.aclose()
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    async def __aenter__(self) -> ServerFactory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __getstate__(self) -> dict[str, Any]:  # picklable for Ray: connections stay behind
        cut = {"_clients": None, "_lean": None, "_path": None, "sdk_reason": None}
        return {**self.__dict__, **cut, "turns_answered": 0, "widest_answered": 0}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._clients = weakref.WeakKeyDictionary()


Rejection = Callable[[int, str], str]
"""``(status, server message) -> hint`` appended to a :class:`PolicyRequestRejected`."""

Backoff = random.Random | Callable[[], random.Random]
"""The seeded generator of the retry delays' jitter, or a callable that returns it (called
only when a retry waits: most episodes never retry, and need not seed one)."""

Answer = TypeVar("Answer")
"""What a request's ``send`` returns: the answer as its reader read it."""
Read = TypeVar("Read")
"""What a reader of an answer's bytes returns (:meth:`ServerFactory.post`)."""


async def call_with_retries(
    factory: ServerFactory,
    rng: Backoff,
    send: Callable[[], Awaitable[Answer]],
    hint: Rejection | None = None,
) -> tuple[Answer, str | None]:
    """``await send()`` with the retry policy: the decoded response and the weight version
    read when the successful attempt was sent (see the module docstring)."""
    retry = factory.retry
    where = factory.base_url or "server"
    last = "no attempt made"
    status: int | None = None
    timeouts = 0
    for attempt in range(retry.max_attempts):
        version = factory.current_weight_version()
        retry_after: float | None = None
        try:
            return await within(retry.call_timeout, send), version
        except TimeoutError:  # no answer at all (the SDK's timeouts may be a refused connect)
            last, status = f"no response within {retry.call_timeout} s", None
            timeouts += 1
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
            timeouts += status in TIMEOUT_STATUS
        except openai.APIConnectionError as err:  # includes the SDK's timeouts
            last, status = f"{type(err).__name__}: {err}{_root_cause(err)}", None
        except BadResponse as err:
            last, status = str(err), None
        if attempt + 1 < retry.max_attempts:
            jitter = rng if isinstance(rng, random.Random) else rng()
            await asyncio.sleep(retry.delay(attempt, jitter, retry_after))
    failed = PolicyTimedOut if timeouts == retry.max_attempts else PolicyServerError
    raise failed(f"{where} failed {retry.max_attempts} attempts; last: {last}", status=status)


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
