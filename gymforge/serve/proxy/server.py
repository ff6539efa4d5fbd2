"""``gymforge proxy``: an OpenAI-compatible proxy that records each episode's exact tokens.

Each live episode has its own base URL, ``http://HOST:PORT/e/EPISODE_ID/v1``, so an
unmodified OpenAI client pointed at it is attributed to exactly that episode. Routes:

- ``POST /e/{id}/v1/chat/completions``: a request that extends the episode's previous one
  is served token-in (:mod:`~gymforge.serve.proxy.continuation`); any other is passed
  through to the upstream server with ``return_token_ids`` and ``logprobs`` added, and the
  response goes back as the server sent it, minus only the fields the proxy added
  (streaming responses are relayed chunk by chunk). Requests of one episode are served one
  at a time, in arrival order. Either way the turn is recorded
  (:class:`~gymforge.serve.proxy.transcript.ProxyTurn`).
- ``GET /e/{id}/v1/models``: the upstream's model list.
- ``POST /episodes`` (``{"episode_id": ..., "model": ...}``; with a ``model``, the episode's
  chat requests must name it), ``GET /episodes/{id}``,
  ``DELETE /episodes/{id}``: open an episode, read its transcript, close it (returning
  the transcript); ``PUT /weight_version`` (``{"weight_version": ...}``) sets the version
  recorded from then on; ``GET /health``.

A request for an episode that is not open is refused (404, ``unknown_episode``). Auth and
limits are those of ``gymforge serve``: with a token every route but ``/health`` needs
``Authorization: Bearer TOKEN`` (the OpenAI SDK sends its ``api_key`` so), binding beyond
loopback needs one, bodies over ``max_body_bytes`` are refused, at most ``max_episodes``
are open at once, an episode with no request for ``idle_timeout`` is closed by the reaper,
and an upstream call taking over ``request_timeout`` is a 504.

Tokens: the proxy's own token (``ProxyConfig.token``) is the operator's; it opens and
closes episodes and sets the weight version. Each episode also gets a token of its own
(:meth:`ProxyServer.episode_token`; returned by ``POST /episodes``), which opens that
episode's routes and nothing else: not another episode's, not the control routes. A
harness is given only its episode's token. ``/health`` says only whether the proxy is up
and how many episodes are open (never the upstream URL, which may carry credentials).
Chat requests are checked field by field (:mod:`~gymforge.serve.proxy.request`): a field
that would constrain sampling, or one of the wrong type, is a 400 naming it.
"""

from __future__ import annotations

import asyncio
import hmac
import re
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

from gymforge.core.errors import InfraError, UserError
from gymforge.serve.config import auth_problem
from gymforge.serve.loop_thread import LoopThread, start_site
from gymforge.serve.proxy.config import ProxyConfig
from gymforge.serve.proxy.continuation import Continuation
from gymforge.serve.proxy.crash import Asked, hung_up, judge, over_budget
from gymforge.serve.proxy.forward import Forwarder
from gymforge.serve.proxy.request import chat_problem
from gymforge.serve.proxy.transcript import EpisodeTranscript

__all__ = ["EPISODE_ID", "ProxyConfig", "ProxyServer"]

EPISODE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,200}$")


def _error(status: int, message: str, code: str) -> web.Response:
    body = {"error": {"message": message, "type": "invalid_request_error", "code": code}}
    return web.json_response(body, status=status)


@dataclass
class _Episode:
    transcript: EpisodeTranscript
    lock: asyncio.Lock
    token: str
    last: float = field(default_factory=time.monotonic)  # the last request's arrival
    upstream_failure: str | None = None  # the infrastructure failure its last request got
    model: str | None = None  # the only model its requests may name (None: any)
    asked: Asked | None = None  # its last chat request, until answered (proxy.crash)


class ProxyServer:
    """The proxy in a background thread. ``open_episode``/``close_episode``/``transcript``
    may be called from any thread; :attr:`url` is set once started."""

    def __init__(self, config: ProxyConfig) -> None:
        self.config = config
        self.weight_version: str | None = None
        self._episodes: dict[str, _Episode] = {}
        self._guard = threading.Lock()
        self._loop = LoopThread("gymforge-proxy")
        self._runner: web.AppRunner | None = None
        self._http: aiohttp.ClientSession | None = None
        self._reaper: asyncio.Task[None] | None = None
        self.reaped = 0
        self._continuation = Continuation(
            config.upstream.rstrip("/"), config.upstream_api_key, config.tokenizer
        )
        self._forward = Forwarder(config, self._continuation, lambda: self.weight_version)
        self.port = config.port

    # ---- lifecycle ----------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://{self.config.host}:{self.port}"

    def base_url(self, episode_id: str) -> str:
        """The OpenAI base URL of one episode."""
        return f"{self.url}/e/{episode_id}/v1"

    def start(self) -> ProxyServer:
        self._loop.start(self._serve)
        return self

    def stop(self) -> None:
        self._loop.stop(self._shutdown)

    def __enter__(self) -> ProxyServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _serve(self) -> None:
        app = web.Application(client_max_size=self.config.max_body_bytes)
        app.middlewares.append(self._auth)
        app.router.add_get("/health", self._health)
        app.router.add_post("/e/{episode}/v1/chat/completions", self._chat)
        app.router.add_get("/e/{episode}/v1/models", self._models)
        app.router.add_post("/episodes", self._open_route)
        app.router.add_get("/episodes/{episode}", self._read_route)
        app.router.add_delete("/episodes/{episode}", self._close_route)
        app.router.add_put("/weight_version", self._weight_route)
        self._runner = web.AppRunner(
            app,
            handle_signals=False,
            access_log=None,
            shutdown_timeout=1.0,
            handler_cancellation=True,  # a harness that gives up frees its handler
        )
        self.port = await start_site(self._runner, self.config.host, self.config.port)
        headers = {}
        if self.config.upstream_api_key:
            headers["Authorization"] = f"Bearer {self.config.upstream_api_key}"
        self._http = aiohttp.ClientSession(
            headers=headers, timeout=aiohttp.ClientTimeout(total=self.config.request_timeout)
        )
        self._forward.http = self._http
        self._reaper = asyncio.get_running_loop().create_task(self._reap())

    async def _reap(self) -> None:
        """Close episodes with no request for ``idle_timeout`` (never-closed episodes would
        hold capacity forever), checking a few times per timeout."""
        period = min(5.0, self.config.idle_timeout / 4)
        while True:
            await asyncio.sleep(period)
            now = time.monotonic()
            with self._guard:
                idle = [
                    k
                    for k, ep in self._episodes.items()
                    if now - ep.last > self.config.idle_timeout and not ep.lock.locked()
                ]
                for k in idle:
                    del self._episodes[k]
                self.reaped += len(idle)

    async def _shutdown(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
        if self._runner is not None:
            await self._runner.cleanup()
        if self._http is not None:
            await self._http.close()
        await self._continuation.aclose()

    # ---- episodes -----------------------------------------------------------------------
    def open_episode(
        self, episode_id: str, token: str | None = None, model: str | None = None
    ) -> str:
        """Open ``episode_id`` and return its base URL; UserError if the id is malformed,
        already open, or the proxy is at ``max_episodes``. ``token``: the episode's own
        bearer token (default: a fresh random one; :meth:`episode_token` reads it).
        ``model``: the model the episode plays (the one trained); a chat request naming
        another is refused, so no other model's tokens are recorded as the episode's."""
        if token is not None and len(token) < 16:
            raise UserError("an episode token must be at least 16 characters")
        if not EPISODE_ID.match(episode_id):
            raise UserError(f"episode id {episode_id[:80]!r} must match {EPISODE_ID.pattern}")
        with self._guard:
            if episode_id in self._episodes:
                raise UserError(f"episode {episode_id!r} is already open on this proxy")
            if len(self._episodes) >= self.config.max_episodes:
                raise UserError(
                    f"the proxy is at capacity ({self.config.max_episodes} open episodes)"
                )
            self._episodes[episode_id] = _Episode(
                EpisodeTranscript(episode_id),
                asyncio.Lock(),
                token or secrets.token_urlsafe(24),
                model=model,
            )
        return self.base_url(episode_id)

    def close_episode(self, episode_id: str) -> EpisodeTranscript:
        """Close the episode (its URL is refused from now on) and return its transcript."""
        with self._guard:
            ep = self._episodes.pop(episode_id, None)
        if ep is None:
            raise UserError(f"no open episode {episode_id!r} on this proxy")
        return ep.transcript

    def episode_token(self, episode_id: str) -> str:
        """The bearer token that opens ``episode_id``'s routes (and no other episode's)."""
        with self._guard:
            ep = self._episodes.get(episode_id)
        if ep is None:
            raise UserError(f"no open episode {episode_id!r} on this proxy")
        return ep.token

    def upstream_failure(self, episode_id: str) -> str | None:
        """The failure of the inference server (unreachable, timed out, a bad answer, 429 or
        5xx) this episode's last request was answered with, or None: what tells a harness
        that fell over because the server did from one that fell over by itself. A request
        sent after a failure forgets it: a harness that moved on from a failure and fell
        over later (its next request answered, or still in flight) fell over by itself."""
        with self._guard:
            ep = self._episodes.get(episode_id)
        return None if ep is None else ep.upstream_failure

    async def judge_crash(self, episode_id: str) -> str | None:
        """Why a harness's crash in ``episode_id`` after the upstream failed it (or while
        its first request was unanswered) is the policy's own, or None
        (:mod:`~gymforge.serve.proxy.crash`); awaited from any loop, run on the proxy's."""
        with self._guard:
            ep = self._episodes.get(episode_id)
        loop, http = self._loop.loop, self._http
        if ep is None or loop is None or http is None:
            return None
        found = judge(http, self.config.upstream, ep.transcript, ep.asked, self._forward.answered)
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(found, loop))

    def transcript(self, episode_id: str) -> EpisodeTranscript:
        with self._guard:
            ep = self._episodes.get(episode_id)
        if ep is None:
            raise UserError(f"no open episode {episode_id!r} on this proxy")
        return ep.transcript

    # ---- routes -------------------------------------------------------------------------
    @web.middleware
    async def _auth(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if request.path != "/health":
            header = request.headers.get("authorization")
            problem = auth_problem(header, self.config.token)
            if problem == "wrong bearer token" and self._episode_token_matches(request, header):
                problem = None
            if problem is not None:
                status = 401 if problem.startswith("missing") else 403
                return _error(status, problem, "unauthorized")
        response: web.StreamResponse = await handler(request)
        return response

    def _episode_token_matches(self, request: web.Request, header: str | None) -> bool:
        """Whether ``header`` carries the token of the episode this route belongs to
        (only ``/e/{id}/...`` routes take an episode's token)."""
        if not request.path.startswith("/e/"):
            return False
        with self._guard:
            ep = self._episodes.get(request.match_info.get("episode", ""))
        given = (header or "").partition(" ")[2].strip()
        return ep is not None and hmac.compare_digest(given.encode(), ep.token.encode())

    async def _health(self, request: web.Request) -> web.Response:
        with self._guard:
            n = len(self._episodes)
        return web.json_response({"ok": True, "episodes": n})

    async def _json(self, request: web.Request) -> dict[str, Any] | web.Response:
        try:
            body = await request.json()
        except web.HTTPRequestEntityTooLarge:
            return _error(413, f"body over {self.config.max_body_bytes} bytes", "too_large")
        except (ValueError, RecursionError):  # too deep for json: no more readable
            return _error(400, "request body is not JSON", "bad_json")
        if not isinstance(body, dict):
            return _error(400, "request body must be a JSON object", "bad_json")
        return body

    async def _open_route(self, request: web.Request) -> web.Response:
        body = await self._json(request)
        if isinstance(body, web.Response):
            return body
        model = body.get("model")
        if model is not None and not isinstance(model, str):
            return _error(400, "'model' must be a string", "episode")
        try:
            url = self.open_episode(str(body.get("episode_id", "")), model=model)
        except UserError as err:
            return _error(
                409 if "already" in str(err) or "capacity" in str(err) else 400, str(err), "episode"
            )
        token = self.episode_token(str(body["episode_id"]))
        return web.json_response(
            {"episode_id": body["episode_id"], "base_url": url, "token": token}
        )

    async def _read_route(self, request: web.Request) -> web.Response:
        try:
            t = self.transcript(request.match_info["episode"])
        except UserError as err:
            return _error(404, str(err), "unknown_episode")
        return web.json_response(_transcript_json(t))

    async def _close_route(self, request: web.Request) -> web.Response:
        try:
            t = self.close_episode(request.match_info["episode"])
        except UserError as err:
            return _error(404, str(err), "unknown_episode")
        return web.json_response(_transcript_json(t))

    async def _weight_route(self, request: web.Request) -> web.Response:
        body = await self._json(request)
        if isinstance(body, web.Response):
            return body
        version = body.get("weight_version")
        self.weight_version = None if version is None else str(version)
        return web.json_response({"weight_version": self.weight_version})

    def _episode(self, request: web.Request) -> _Episode | web.Response:
        episode_id = request.match_info["episode"]
        with self._guard:
            ep = self._episodes.get(episode_id)
        if ep is None:
            return _error(
                404, f"no live episode {episode_id[:80]!r} on this proxy", "unknown_episode"
            )
        ep.last = time.monotonic()
        return ep

    async def _models(self, request: web.Request) -> web.Response:
        ep = self._episode(request)
        if isinstance(ep, web.Response):
            return ep
        assert self._http is not None
        try:
            async with self._http.get(self.config.upstream.rstrip("/") + "/models") as r:
                return web.Response(
                    body=await r.read(), status=r.status, content_type="application/json"
                )
        except (aiohttp.ClientError, TimeoutError) as err:  # its text names the upstream
            ep.upstream_failure = f"the inference server was unreachable: {err}"
            return _error(502, "upstream unreachable", "upstream")

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        ep = self._episode(request)
        if isinstance(ep, web.Response):
            return ep
        body = await self._json(request)
        if isinstance(body, web.Response):
            return body
        problem = chat_problem(body)
        if problem is None and ep.model is not None and body["model"] != ep.model:
            problem = (
                f"this episode plays model {ep.model!r}, not {str(body['model'])[:80]!r}: its "
                "turns are recorded as that model's samples"
            )
        if problem is not None:
            return _error(400, problem, "bad_request")
        messages = body["messages"]
        detail = ""  # the failure's text names the upstream: the run's, never the harness's
        async with ep.lock:
            # kept if the harness gives up on it; an earlier failure is no longer judged
            ep.asked, ep.upstream_failure = Asked(body), None
            try:
                response = await self._forward.chat(request, ep.transcript, body, messages)
            except (InfraError, UserError, ValueError) as err:  # a bad answer upstream
                detail = f": {err}"
                response = _error(502, f"upstream failed ({type(err).__name__})", "upstream")
            except TimeoutError as err:
                detail, response = f": {err}", _error(504, "upstream timed out", "upstream")
            except aiohttp.ClientError as err:
                detail, response = f": {err}", _error(502, "upstream unreachable", "upstream")
            if hung_up(request):  # given up on: neither answered nor the upstream's failure
                return response
            if (response.status == 429 and not over_budget(response)) or response.status >= 500:
                ep.upstream_failure = f"the inference server answered {response.status}{detail}"
                ep.asked.status = response.status
            else:  # answered, or refused (the harness's crash on that is counted)
                ep.asked = None
            return response


def _transcript_json(t: EpisodeTranscript) -> dict[str, Any]:
    return {
        "episode_id": t.episode_id,
        "branches": t.branches,
        "turns": [turn.as_record() for turn in t.turns],
    }
