"""``RemoteEnvironment``: the ``Environment`` contract over a ``gymforge serve`` WebSocket.

    factory = remote_factory("ws://127.0.0.1:8765", token="...")   # or $GYMFORGE_TOKEN
    env = factory()                    # spec, tasks, qa, budget, toolset: from /metadata
    obs = await env.reset(task_id, seed)
    result = await env.step(action)    # StepResult, rebuilt exactly
    await env.close()

Anything that accepts an environment ref accepts ``ws://HOST:PORT`` (``make_env``,
``gymforge run/qa/replay --env``). Each instance is one WebSocket session, opened on first
use and bound to the event loop that opened it; ``reset`` reopens a session that was lost
(reaped while idle, server restarted), since a reset needs nothing but the task id. A lost
session under a running episode raises ``SessionLost`` (an ``InfraError``: runners retry).

Semantics match a local instance: out-of-order calls raise ``EpisodeStateError``,
unknown ids ``UnknownTaskError``, exceptions inside the server's environment
``RemoteEnvError``. ``reset``/``step`` fetch the state snapshot in the same round trip
(``prefetch_state``), so the runner's ``snapshot()`` after every step costs nothing extra;
a prefetched snapshot is handed out once, and prefetching pauses while snapshots go unread
(a plain training loop) and resumes at the next ``snapshot()``.

Instances made by one factory share its metadata, HTTP connection pool and task caches.
Environments with an oracle come out as ``RemoteOracleEnvironment`` (``oracle_action``).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
from typing import Any

from gymforge.core.env import EnvSpec, StepResult
from gymforge.core.episode import Budget
from gymforge.core.errors import EpisodeStateError, UnknownTaskError, UserError
from gymforge.core.types import Action, Observation, State, Task
from gymforge.kit.redteam import AttackNotApplicable
from gymforge.serve import protocol as p
from gymforge.serve.http import (
    AuthError,
    CapacityError,
    HttpService,
    RemoteEnvError,
    RemoteError,
    SessionLost,
    resolve_token,
)
from gymforge.serve.remote_qa import ACTION, RemoteToolset, profile_from_metadata
from gymforge.serve.remote_tasks import RemoteTaskSource

MAX_REPLY_BYTES = 256 * 2**20


def _raise_for(reply: dict[str, Any]) -> None:
    code, message = reply.get("code", ""), str(reply.get("message", ""))
    if code == "episode_state":
        raise EpisodeStateError(message)
    if code == "unknown_task":
        raise UnknownTaskError(message)
    if code == "not_applicable":
        raise AttackNotApplicable(message)
    if code == "unsupported":
        raise NotImplementedError(message)
    if code == "env_error":
        raise RemoteEnvError(message, code)
    if code == "unauthorized":
        raise AuthError(message)
    if code == "capacity":
        raise CapacityError(message, code)
    if reply.get("fatal"):
        raise SessionLost(f"{code}: {message}", code)
    raise RemoteError(f"{code}: {message}", code)


def _closed_error(err: Exception) -> Exception:
    frame = getattr(err, "rcvd", None)
    code = getattr(frame, "code", None)
    reason = getattr(frame, "reason", "") or ""
    if code == p.CLOSE_POLICY_VIOLATION:
        return AuthError(f"the server refused the session: {reason}")
    if code == p.CLOSE_TRY_AGAIN:
        return CapacityError(f"server at capacity: {reason}", "capacity")
    return SessionLost(f"session closed ({code}: {p.CLOSE_CODES.get(code or 0, reason)})")


class _Channel:
    """One WebSocket session, bound to the loop that opened it; requests are serialised."""

    def __init__(self, service: HttpService, open_timeout: float = 30.0) -> None:
        self.service = service
        self.open_timeout = open_timeout
        self.ws: Any = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.lock: asyncio.Lock | None = None
        self.session: str | None = None
        self._ids = 0

    @property
    def usable(self) -> bool:
        from websockets.protocol import State as WsState

        return (
            self.ws is not None
            and self.loop is asyncio.get_running_loop()
            and self.ws.state is WsState.OPEN
        )

    async def open(self) -> None:
        from websockets.asyncio.client import connect
        from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException

        self.drop()
        try:
            ws = await connect(
                self.service.ws_url,
                additional_headers=self.service.headers,
                max_size=MAX_REPLY_BYTES,
                compression=None,
                open_timeout=self.open_timeout,
                ping_interval=20,
                ping_timeout=20,
                close_timeout=5,
            )
        except InvalidStatus as err:
            status = err.response.status_code
            if status in (401, 403):
                raise AuthError(f"{self.service.ws_url}: HTTP {status}") from err
            raise RemoteError(f"{self.service.ws_url}: HTTP {status}") from err
        except (OSError, TimeoutError, WebSocketException) as err:
            raise RemoteError(f"cannot open {self.service.ws_url}: {err}") from err
        try:
            hello = json.loads(await ws.recv())
        except ConnectionClosed as err:
            raise _closed_error(err) from err
        if hello.get("type") != "hello":
            await ws.close()
            _raise_for(hello)
        self.ws, self.loop, self.lock = ws, asyncio.get_running_loop(), asyncio.Lock()
        self.session = hello.get("session")

    def drop(self) -> None:
        """Forget the connection; abort it when it belongs to another (or a dead) loop."""
        ws, self.ws = self.ws, None
        if ws is not None:
            transport = getattr(ws, "transport", None)
            if transport is not None:
                with contextlib.suppress(RuntimeError):  # its loop may be closed already
                    transport.abort()

    async def request(self, message: dict[str, Any]) -> dict[str, Any]:
        from websockets.exceptions import ConnectionClosed

        if not self.usable:
            raise SessionLost("no open session (it was closed, lost or opened on another loop)")
        assert self.lock is not None
        async with self.lock:
            self._ids += 1
            message["id"] = self._ids
            try:
                await self.ws.send(p.dumps(message))
                while True:  # skip replies to requests that were cancelled mid-flight
                    reply = json.loads(await self.ws.recv())
                    got = reply.get("id")
                    if got is None or got == self._ids or not isinstance(got, int):
                        break
            except ConnectionClosed as err:
                raise _closed_error(err) from err
        if reply.get("type") == "error":
            _raise_for(reply)
        return reply  # type: ignore[no-any-return]

    async def close(self) -> None:
        if not self.usable:
            self.drop()
            return
        try:
            await asyncio.wait_for(self.request({"type": "close"}), 5)
            await asyncio.wait_for(self.ws.close(), 5)
        except (RemoteError, TimeoutError, OSError):
            pass
        self.drop()


class RemoteEnvironment:
    """A served environment (see the module docstring)."""

    def __init__(self, factory: RemoteEnvFactory, prefetch_state: bool = True) -> None:
        meta = factory.metadata()
        self.factory = factory
        self.spec: EnvSpec = factory.spec
        self.tasks: RemoteTaskSource | None = factory.tasks
        self.qa = factory.profile
        self.budget: Budget | None = factory.budget
        server = meta["server"]
        tools = meta.get("tools")
        self.toolset: RemoteToolset | None = (
            RemoteToolset(self, tools, bool(server["fault_injection"]))
            if tools is not None
            else None
        )
        self.task: Task | None = None
        self.prefetch_state = prefetch_state
        self._want_state = True
        self._chan = _Channel(factory.service)
        self._pending: dict[str, Any] = {}
        self._state: State | None = None
        self._closed = False
        self._started = False  # a session was opened by reset (a lost one is SessionLost)

    @property
    def _prefetch(self) -> bool:
        return self.prefetch_state and self._want_state

    @property
    def session_id(self) -> str | None:
        return self._chan.session

    async def _request(self, message: dict[str, Any]) -> dict[str, Any]:
        if self._closed:
            raise EpisodeStateError(f"{message['type']}() on a closed environment")
        if self._state is not None:  # a prefetched snapshot went unread: stop prefetching
            self._state, self._want_state = None, False
        if not self._chan.usable and not self._started:
            raise EpisodeStateError(f"{message['type']}() before reset()")
        if self._pending:
            pending, self._pending = self._pending, {}
            await self._chan.request({"type": "inject", **pending})
        return await self._chan.request(message)

    async def reset(self, task_id: str, seed: int) -> Observation:
        if self._closed:
            raise EpisodeStateError("reset() on a closed environment")
        fresh = not self._chan.usable
        if fresh:
            await self._chan.open()
        message = {"type": "reset", "task_id": task_id, "seed": seed, "state": self._prefetch}
        self._started = True
        pending = dict(self._pending)
        try:
            reply = await self._request(message)
        except SessionLost:
            if fresh:
                raise
            # the session was lost (reaped, closed) before this reset reached it, its notice
            # not read yet: a reset starts afresh, so on a new session
            self._chan.drop()
            await self._chan.open()
            self._pending = pending
            reply = await self._request(message)
        view = reply.get("task")
        self.task = Task.model_validate(view) if view is not None else None
        self._state = reply.get("state")
        return Observation.model_validate(reply["observation"])

    async def step(self, action: Action) -> StepResult:
        message = {
            "type": "step",
            "action": action.model_dump(mode="json"),
            "state": self._prefetch,
        }
        reply = await self._request(message)
        self._state = reply.get("state")
        return p.step_from_json(reply)

    async def snapshot(self) -> State:
        if self._state is not None:
            state, self._state = self._state, None
            return state
        self._want_state = True  # the caller does read snapshots: prefetch them again
        return (await self._request({"type": "snapshot"}))["state"]  # type: ignore[no-any-return]

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            await self._chan.close()

    def oracle_plan(self, task: Task) -> list[Action] | None:
        """The server's reference plan for ``task`` (by id), or None without one."""
        if not self.factory.metadata()["has_oracle_plan"]:
            return None
        plan = self.factory.service.post("/oracle/plan", {"task_id": task.task_id})["plan"]
        return None if plan is None else [ACTION.validate_python(a) for a in plan]

    async def _policy_request(self, message: dict[str, Any]) -> dict[str, Any]:
        """A server-side policy message (red-team cases); opens the session if needed."""
        if not self._closed and not self._chan.usable:
            await self._chan.open()
            self._started = True
        return await self._request(message)


class RemoteOracleEnvironment(RemoteEnvironment):
    """A served environment with an oracle (``SupportsOracle``)."""

    async def oracle_action(self) -> Action:
        reply = await self._request({"type": "oracle_action"})
        return ACTION.validate_python(reply["action"])


class RemoteEnvFactory:
    """Makes ``RemoteEnvironment``s of one server; reads ``/metadata`` once, lazily."""

    def __init__(self, ref: str, token: str | None = None) -> None:
        self.ref = ref
        self.service = HttpService(ref, token)
        self._meta: dict[str, Any] | None = None

    def metadata(self) -> dict[str, Any]:
        if self._meta is None:
            try:
                meta = self.service.get("/metadata")
            except RemoteError as err:
                raise UserError(f"cannot reach the environment server {self.ref}: {err}") from err
            if meta.get("protocol") != p.PROTOCOL_VERSION:
                raise UserError(
                    f"{self.ref} speaks protocol {meta.get('protocol')}, "
                    f"this client {p.PROTOCOL_VERSION}"
                )
            self.spec = EnvSpec(**meta["spec"])
            tasks = meta.get("tasks")
            self.tasks = (
                RemoteTaskSource.from_metadata(tasks, self.service) if tasks is not None else None
            )
            self.profile = profile_from_metadata(meta.get("qa"))
            self.budget = Budget(**meta["budget"]) if meta.get("budget") else None
            self._meta = meta
        return self._meta

    def __call__(self) -> RemoteEnvironment:
        cls = RemoteOracleEnvironment if self.metadata()["has_oracle"] else RemoteEnvironment
        return cls(self)


_FACTORIES: dict[tuple[str, str | None], RemoteEnvFactory] = {}


@atexit.register
def _close_services() -> None:
    for factory in _FACTORIES.values():
        factory.service.close()


def remote_factory(ref: str, token: str | None = None) -> RemoteEnvFactory:
    """The (per process, per ref and token) factory of a served environment. The token is
    ``token`` or ``$GYMFORGE_TOKEN``."""
    key = (ref, resolve_token(token))
    factory = _FACTORIES.get(key)
    if factory is None:
        factory = _FACTORIES[key] = RemoteEnvFactory(ref, key[1])
    return factory
