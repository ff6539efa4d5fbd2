"""Whether a harness that fell over on its inference server's failure fell over on its own
model's doing: the rule the server policies' turns are judged by, for a harness's requests.

A harness falls over when a model call fails it, and such a crash was infrastructure
(retried, never scored) whenever the proxy had answered the harness with the upstream's
failure (:mod:`gymforge.serve.harness.episode`). Two such failures are the policy's own,
and a policy that could make them on the tasks it fails would take those out of the count:

- **the agent's text failed on.** Once a turn was answered, the harness's requests hold the
  model's output; a server that fails on that text (a 5xx, a cut connection, a 504 of its
  own, on each of the harness's attempts) fails it again. As for a server policy's turn
  (:func:`gymforge.core.blame.blame_failure`, ``rollout.transcript_refusal``), the episode's
  first request (the first turn's messages and tools, none of the model's output) is asked
  for one token: answered, the harness's failed request is sent once more, as it was sent,
  and a failure of that (not a 429: load) is the policy's counted failure. A first request
  failed too, or the request answered when asked again, is an outage, retried as before.
- **a first answer the server fails on.** Its first request holds none of the model's
  output, but a server can fail on the answer it generates (a tool-call parser raising, a
  gateway's filter): the same request for one token answered and the request failed again,
  sent once more, is the policy's counted failure too, once the proxy has answered a whole
  turn (of any episode); before that, every answer may fail (the upstream's configuration).
- **a first answer too long to wait for.** The harness's first request not answered when it
  fell over (its own client gave up, or the proxy's ``request_timeout`` answered 504): as a
  server policy's first turn (``rollout.liveness``), the same request for one token is
  asked; answered, the server was generating, and the length of the answer was the model's.

Only the harness's last request counts (the proxy keeps it until it is answered,
``Asked``; a failure of an earlier one is forgotten when the next is sent, and a request
the harness hung up on is one it gave up on, :func:`hung_up`, never the upstream's
failure), and these requests are made by the proxy on its own loop
(:meth:`~gymforge.serve.proxy.server.ProxyServer.judge_crash`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp import web

from gymforge.core.blame import RATE_LIMITED, blame_failure
from gymforge.core.errors import InfraError
from gymforge.rollout.context_full import is_context_full
from gymforge.rollout.liveness import PROBE_TOKENS, SMALL_TOKENS, refused_for_bound
from gymforge.rollout.server import TIMEOUT_STATUS
from gymforge.serve.proxy.transcript import EpisodeTranscript

__all__ = ["Asked", "hung_up", "judge", "over_budget"]


@dataclass
class Asked:
    """The harness's last chat request, kept until it is answered: ``status`` is what the
    proxy answered it with when that was a failure (None: not answered at all, the harness
    gave up first)."""

    body: dict[str, Any]
    status: int | None = None


async def judge(
    http: aiohttp.ClientSession,
    upstream: str,
    transcript: EpisodeTranscript,
    asked: Asked | None,
    answered: int = 0,
) -> str | None:
    """Why a harness's crash is the policy's counted failure (the module docstring's
    cases), or None: infrastructure, as before. ``answered``: the whole turns the proxy
    has answered, every episode's."""
    if asked is None or asked.status == RATE_LIMITED:
        return None
    url = upstream.rstrip("/") + "/chat/completions"
    if not transcript.turns and (asked.status is None or asked.status in TIMEOUT_STATUS):
        if await _small(http, url, asked.body) != 200:  # a first answer too long to wait for?
            return None
        return "its first request, asked again for one token, is answered: a long answer"
    if asked.status is None:
        return None  # the harness gave up on its own after it acted: counted already
    if transcript.turns:
        first = transcript.turns[0]
        opening = {"model": asked.body.get("model"), "messages": first.messages}
        if first.tools:
            opening["tools"] = first.tools
    elif answered:  # its first request failed: on the answer the model generates?
        opening = asked.body
    else:
        return None  # never seen answering a whole turn: every answer may fail (configuration)

    async def without_text() -> None:
        status = await _small(http, url, opening)
        if status != 200:
            raise InfraError(f"the episode's first request, for one token: {status}")

    try:
        await blame_failure(InfraError(f"answered {asked.status}"), without_text)
    except InfraError:
        return None
    again = await _status(http, url, _unstreamed(asked.body))
    if again in (200, RATE_LIMITED):
        return None
    failed_on = "text" if transcript.turns else "answer"
    return (
        f"the upstream failed its request ({asked.status}, and {again} sent once more) and "
        f"answered the episode's first request for one token: it fails on the model's {failed_on}"
    )


def _unstreamed(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` answered whole: without ``stream`` and ``stream_options`` (which a server
    refuses without ``stream``, a 400 that would read as the request failing again)."""
    return {**{k: v for k, v in body.items() if k != "stream_options"}, "stream": False}


async def _small(http: aiohttp.ClientSession, url: str, body: dict[str, Any]) -> int:
    """The upstream's status for ``body`` asking one token; refused for so small a bound (a
    minimum ``max_tokens``), asked again for ``SMALL_TOKENS`` (``rollout.liveness``)."""
    sent = {k: v for k, v in _unstreamed(body).items() if k != "max_completion_tokens"}
    status = await _status(http, url, {**sent, "max_tokens": PROBE_TOKENS})
    if refused_for_bound(status):
        status = await _status(http, url, {**sent, "max_tokens": SMALL_TOKENS})
    return status


async def _status(http: aiohttp.ClientSession, url: str, body: dict[str, Any]) -> int:
    """The upstream's status for ``body`` (502 when it is unreachable or cuts the
    connection, 504 past the session's timeout)."""
    try:
        async with http.post(url, json=body) as r:
            await r.read()
            return r.status
    except TimeoutError:
        return 504
    except aiohttp.ClientError:
        return 502


def over_budget(response: web.StreamResponse) -> bool:
    """Whether ``response``, relayed from the upstream, is a 429 saying the request alone is
    over its per-minute token budget (``rollout.context_full``): a limit the transcript
    outgrew, as a 413's, not a failure of the upstream's (a harness's crash on it is the
    policy's, counted)."""
    body = getattr(response, "body", None)
    if response.status != RATE_LIMITED or not isinstance(body, bytes):
        return False
    return is_context_full(RATE_LIMITED, body[:4096].decode("utf-8", "replace"))


def hung_up(request: web.Request) -> bool:
    """Whether the harness closed the connection of ``request``: a request it gave up on,
    whatever the proxy's write to it then raised (aiohttp's ``ClientConnectionResetError``
    is a ``ClientError``, as the upstream unreachable is), never the upstream's failure."""
    transport = request.transport
    return transport is None or transport.is_closing()
