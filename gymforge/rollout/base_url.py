"""A policy server's base URL, checked before any request: refused when no request could be
sent to it as given (:func:`refuse_unusable`), and whether the SDK's own request path must
carry its requests (:func:`sdk_only_reason`)."""

from __future__ import annotations

import urllib.request
from urllib.parse import urlsplit

import openai

from gymforge.core.errors import UserError


def refuse_unusable(base_url: str | None) -> None:
    """Refuse a base URL no request can be sent to as given:

    - one carrying ``user:password@`` (or ``user@``, or ``:@``): a request cannot send them
      beside the API key's bearer token (the SDK's aiohttp transport refuses every such
      request; its httpx transport sends them in place of the key). The error shows the URL
      without them. An empty ``@`` is taken: the SDK's URL drops it;
    - one with a query, even an empty one (``?``): the SDK appends each request's path
      after it (``/v1/?api-version=1chat/completions``), and no request reaches its
      endpoint. The error leaves the query out (it may carry a key);
    - one naming no HTTP(S) host: ``http:host/v1`` or ``host:8000/v1`` (no ``//``),
      ``http://:9/v1``, ``ftp://host/v1``. The SDK takes it and every request fails (the
      lean client's goes to port 80 of this machine), each error naming the URL; shown
      only when it holds no ``@`` (without a ``//`` a password is not in the netloc);
    - one ``urlsplit`` cannot parse (the SDK cannot either), or whose port is not a
      number: a password holding ``/``, ``?`` or ``#`` unencoded (``http://u:pa/ss@host``)
      ends the host there, as the port ``pa``, and the SDK's every error named it.

    No error shows a URL holding an ``@`` anywhere but as ``***@host``: a password cut
    short by a delimiter is in the host or the path."""
    if base_url is None:
        return
    try:
        url = urlsplit(base_url)
        url.port  # noqa: B018  # ValueError when not a number (a password's first part?)
    except ValueError:  # its text may hold the password: not shown
        raise UserError(
            "the base URL cannot be parsed (a malformed host, port or [IPv6] address; a "
            "'/', '?' or '#' in a password must be percent-encoded); give it as "
            "scheme://host[:port]/v1"
        ) from None
    if url.username or url.password is not None:  # a bare "@" the SDK drops: harmless
        path = "/..." if "@" in url.path else url.path  # a password's part after a '/'?
        shown = f"{url.scheme}://***@{url.netloc.rpartition('@')[2]}{path}"
        raise UserError(
            f"the base URL {shown} carries credentials (user:password@), which cannot be "
            "sent beside the API key's bearer token: give the key as $OPENAI_API_KEY "
            "instead, or put a proxy that adds them in front of the server"
        )
    if url.scheme.lower() not in ("http", "https") or not url.hostname:
        shown = "" if "@" in base_url else f" {base_url}"  # no netloc: a password in the path
        raise UserError(
            f"the base URL{shown} names no HTTP server (a missing // or host, or another "
            "scheme): give it as http(s)://host[:port]/v1"
        )
    if "?" in base_url.partition("#")[0]:
        shown = url._replace(query="", fragment="").geturl()  # a query may carry a key
        shown = "" if "@" in base_url else f" {shown}?..."
        raise UserError(
            f"the base URL{shown} has a query: the OpenAI client appends each "
            "request's path after it, so no request would reach its endpoint; give the base "
            "URL without it (up to /v1)"
        )


def sdk_only_reason(client: openai.AsyncOpenAI) -> str | None:
    """Why ``client``'s requests need the SDK's own path (None: the lean client does what
    the SDK would): a proxy from the environment applies to its URL (the SDK's transports
    honour ``$HTTP_PROXY``, ``$HTTPS_PROXY``, ``$ALL_PROXY`` and ``$NO_PROXY``; the lean
    client speaks to the server directly), or it authenticates through a provider or a
    workload identity (per-request credentials). A base URL carrying ``user:password@``
    never gets here (:func:`refuse_unusable`).

    A proxy applies when ``urllib``'s reading of ``$NO_PROXY`` says so *or* the SDK's own
    client routes the URL through one: the two differ (``.example.com`` exempts
    ``example.com`` for ``urllib``, only its subdomains for the SDK's transports), and the
    lean client must never speak directly to a server the SDK would reach through a proxy."""
    url = urlsplit(str(client.base_url))
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(url.scheme) or proxies.get("all")
    bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]
    if (proxy and not bypass(url.hostname or "", proxies)) or _sdk_proxies(client):
        return f"a proxy from the environment applies to {url.scheme}://{url.netloc}"
    if getattr(client, "_provider_runtime", None) is not None:
        return "the client authenticates through a provider"
    if getattr(client, "workload_identity", None) is not None:
        return "the client authenticates with a workload identity"
    return None


def _sdk_proxies(client: openai.AsyncOpenAI) -> bool:
    """Whether the SDK's HTTP client sends its base URL's requests through a mounted proxy
    transport (the one it built from the environment); True when it cannot be asked."""
    http = getattr(client, "_client", None)
    route = getattr(http, "_transport_for_url", None)
    merge = getattr(http, "_merge_url", None)
    if route is None or merge is None:
        return bool(urllib.request.getproxies_environment())
    return route(merge(str(client.base_url))) is not getattr(http, "_transport", None)
