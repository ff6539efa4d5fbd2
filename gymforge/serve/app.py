"""The FastAPI application of ``gymforge serve``.

Routes (every one but ``/health`` needs ``Authorization: Bearer <token>`` when a token is
set; a missing token is 401 with ``WWW-Authenticate: Bearer``, a wrong one 403; the
WebSocket closes with 1008 instead):

- ``GET /health``: liveness, ``{"status": "ok", "protocol": 1}``; never authenticated.
- ``GET /metadata``: the environment's declarations (see ``gymforge.serve.meta``).
- ``GET /schema``: JSON Schemas of the message protocol and of trajectory records.
- ``GET /metrics``: sessions, steps, errors, latency percentiles; JSON, or Prometheus text
  with ``?format=prometheus`` or ``Accept: text/plain``.
- ``POST /tasks/{sample,resolve,heldout,family}``: task operations for remote task sources.
- ``POST /oracle/plan``: ``{task_id}`` -> ``{"plan": [actions] | null}`` (QA hooks only).
- ``WS /ws``: one session per connection (``gymforge.serve.protocol``).

HTTP bodies over ``max_message_bytes`` get 413; errors are ``{"error": {code, message}}``.
The interactive docs are off: they would be unauthenticated.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import Depends, FastAPI, Request, WebSocket
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from gymforge.core.errors import UnknownTaskError
from gymforge.serve.config import ServeConfig, auth_problem
from gymforge.serve.frames import FrameError, decode_frame
from gymforge.serve.hub import Hub
from gymforge.serve.meta import TASK_OPS, EnvCatalog, OpError, ResolveReq
from gymforge.serve.metrics import Metrics
from gymforge.serve.protocol import PROTOCOL_VERSION, protocol_json_schema
from gymforge.serve.record import Recorder
from gymforge.trajectory.schema import trajectory_json_schema


class HTTPError(Exception):
    def __init__(
        self, status: int, code: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status, self.code, self.headers = status, code, headers


def _error_response(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPError)
    body = {"error": {"code": exc.code, "message": str(exc)}}
    return JSONResponse(body, status_code=exc.status, headers=exc.headers)


async def read_json(request: Request, limit: int) -> Any:
    """The request body as a JSON object: over ``limit`` bytes 413, not a JSON object or
    nested too deeply 400 (``gymforge.serve.frames``)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise HTTPError(413, "too_large", f"body of {declared} bytes > {limit}")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise HTTPError(413, "too_large", f"body over {limit} bytes")
    data = decode_frame(bytes(body) or b"{}", limit)  # bounded like a WebSocket frame
    if isinstance(data, FrameError):
        raise HTTPError(413 if data.code == "too_large" else 400, data.code, data.message)
    return data


def create_app(
    catalog: EnvCatalog, config: ServeConfig, recorder: Recorder | None = None
) -> FastAPI:
    """The application serving ``catalog``'s environment under ``config``; with a
    ``recorder`` (``--record``) every episode a session starts is written to it."""
    metrics = Metrics(max_sessions=config.max_sessions)
    hub = Hub(catalog, config, metrics, recorder)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        hub.start()
        yield
        try:
            await hub.stop()
            await catalog.probe.close()
        finally:
            await hub.recorder.finish()  # the run seal, once every session is written

    app = FastAPI(
        title=f"gymforge serve {catalog.spec.id}",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        lifespan=lifespan,
    )
    app.add_exception_handler(HTTPError, _error_response)
    app.state.hub = hub
    app.state.session_route = "/ws"  # served by gymforge.serve.ws_fast under gymforge serve

    def authorized(request: Request) -> None:
        problem = auth_problem(request.headers.get("authorization"), config.token)
        if problem is None:
            return
        metrics.auth_failures += 1
        if problem.startswith("missing"):
            raise HTTPError(401, "unauthorized", problem, {"WWW-Authenticate": "Bearer"})
        raise HTTPError(403, "unauthorized", problem)

    auth = [Depends(authorized)]

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {"status": "ok", "protocol": PROTOCOL_VERSION}

    @app.get("/metadata", dependencies=auth)
    async def metadata() -> dict[str, Any]:
        return catalog.metadata(config.limits(), auth=config.token is not None)

    @app.get("/schema", dependencies=auth)
    async def schema() -> dict[str, Any]:
        return {**protocol_json_schema(), "trajectory": trajectory_json_schema()}

    @app.get("/metrics", dependencies=auth)
    async def get_metrics(request: Request, format: str | None = None) -> Response:
        accept = request.headers.get("accept", "")
        if format == "prometheus" or (format is None and "text/plain" in accept):
            return PlainTextResponse(
                metrics.prometheus(), media_type="text/plain; version=0.0.4; charset=utf-8"
            )
        if format not in (None, "json", "prometheus"):
            raise HTTPError(400, "bad_message", "format must be json or prometheus")
        return JSONResponse(metrics.as_json())

    @app.post("/tasks/{op}", dependencies=auth)
    async def tasks(op: str, request: Request) -> dict[str, Any]:
        model = TASK_OPS.get(op)
        if model is None:
            raise HTTPError(404, "unknown_type", f"no task operation {op!r}; {sorted(TASK_OPS)}")
        body = _validate(model, await read_json(request, config.max_message_bytes))
        try:  # in a worker thread: a slow generator must not stall the sessions' loop
            return await run_in_threadpool(catalog.task_op, op, body)
        except UnknownTaskError as err:
            raise HTTPError(404, "unknown_task", str(err)) from err
        except (OpError, ValueError) as err:
            raise HTTPError(400, "bad_message", str(err)) from err

    @app.post("/oracle/plan", dependencies=auth)
    async def oracle_plan(request: Request) -> dict[str, Any]:
        if not config.qa_hooks:
            raise HTTPError(403, "forbidden", "QA hooks are off on this server")
        body = _validate(ResolveReq, await read_json(request, config.max_message_bytes))
        try:
            return {"plan": await run_in_threadpool(catalog.oracle_plan, body.task_id)}
        except UnknownTaskError as err:
            raise HTTPError(404, "unknown_task", str(err)) from err

    @app.websocket("/ws")
    async def session(ws: WebSocket) -> None:
        await hub.handle(ws)

    return app


def _validate(model: Any, data: Any) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        loc = ".".join(str(x) for x in first["loc"]) or "body"
        raise HTTPError(400, "bad_message", f"{loc}: {first['msg']}") from err
