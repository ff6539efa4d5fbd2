"""The HTTP exchange with an OpenAI-compatible server, for the server policies
(:mod:`gymforge.rollout.server`):

- :func:`post_json`: the SDK's documented generic ``client.post`` decoded with ``jiter``
  (about a third of the client CPU of the typed resource methods);
- :func:`post_json_lean`: the same request over gymforge's lean keep-alive client
  (:mod:`gymforge.rollout.json_http`), every failure raised as the SDK raises it
  (:func:`status_error`);
- :class:`SdkOnly`: an answer the lean client does not read as the SDK's transports do (a
  redirect they follow, a content coding they decode): the request goes to the SDK;
- :class:`BadResponse`: a 2xx answer that is not what was asked for (retried like a server
  error), and :func:`first_choice`, which refuses an answer without choices.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import jiter
import openai

from gymforge.core.seeding import ReusedEncoder
from gymforge.rollout.json_http import JsonHttp

try:  # the SDK's HTTP library: httpx2 in openai>=3, httpx before
    import httpx2 as _http
except ImportError:  # pragma: no cover
    import httpx as _http  # type: ignore[no-redef]

HTTP = _http
"""The SDK's HTTP library (its ``create_ssl_context`` is the TLS context its transports use)."""


class SdkOnly(Exception):
    """An answer :func:`post_json_lean` does not read as the SDK's transports would: a
    redirect (they follow it) or a coded body (a request without ``Accept-Encoding``
    accepts any coding, RFC 9110 12.5.3; they decode it). The message says which."""


class BadResponse(Exception):
    """A 2xx response that is not what was asked for: retried like a server error."""


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


async def post_json(
    client: openai.AsyncOpenAI,
    path: str,
    body: dict[str, Any] | bytes,
    timeout: float,
    read: Callable[[bytes], Any] = decode_json,
) -> Any:
    """POST ``body`` (a JSON object, or its encoding as bytes) to ``path`` (relative to the
    base URL, or absolute) and decode the JSON answer with ``read`` (a reader that raises
    ``ValueError`` for what is not JSON); :class:`BadResponse` if it is not JSON."""
    options: Any = {"timeout": timeout}
    if isinstance(body, bytes):  # sent as they are, with the SDK's JSON content type
        response = await client.post(path, content=body, cast_to=_http.Response, options=options)
    else:
        response = await client.post(path, body=body, cast_to=_http.Response, options=options)
    try:
        return read(response.content)
    except ValueError as err:
        raise BadResponse(f"response is not JSON: {err}") from err


async def post_json_lean(
    http: JsonHttp,
    url: str,
    path: str,
    body: dict[str, Any] | bytes,
    timeout: float | None,
    read: Callable[[bytes], Any] = decode_json,
) -> Any:
    """``post_json`` over gymforge's lean keep-alive client (``json_http``) instead of the
    SDK's: the same request, a fraction of the client CPU, and every failure raised as the
    SDK raises it, so ``call_with_retries`` treats them alike: a failed connection is
    ``APIConnectionError``; an error status the SDK's class for it (``RateLimitError``,
    ``InternalServerError``, ...) with the SDK's message, body (the ``error`` object) and
    the response's headers (``Retry-After``) (:func:`status_error`); a 2xx that is not
    JSON ``BadResponse`` (the answer read by ``read``, as for :func:`post_json`); a
    redirect or a coded body :class:`SdkOnly`.
    ``timeout=None``: no bound of its own (``call_with_retries``
    bounds each attempt)."""
    try:
        content = body if isinstance(body, bytes) else encode_body(body)
        status, headers, content = await http.exchange(path, content, timeout)
    except (OSError, EOFError) as err:
        raise openai.APIConnectionError(request=_http.Request("POST", url + path)) from err
    coding = headers.get("content-encoding", "identity").strip().lower()
    if 300 <= status < 400 or coding != "identity":
        what = f"redirects ({status})" if coding == "identity" else f"sends {coding} bodies"
        raise SdkOnly(f"the server {what} on {path}")
    if status >= 400:
        raise status_error(status, headers, content, url + path)
    try:
        return read(content)
    except ValueError as err:
        raise BadResponse(f"response is not JSON: {err}") from err


_BODY = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_REUSED = ReusedEncoder(_BODY)


def encode_body(body: dict[str, Any]) -> bytes:
    """A request body's bytes as the SDK encodes them (its ``openapi_dumps``: compact,
    UTF-8, NaN refused), so both paths send the same bytes: ``_BODY.encode(body)``, by the
    thread's :class:`~gymforge.core.seeding.ReusedEncoder` for a plain ``dict`` (the same
    bytes and errors, ``tests/rollout/test_encode_body.py``)."""
    if type(body) is not dict:
        return _BODY.encode(body).encode()
    return _REUSED.encode(body).encode()


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
