"""One WebSocket session: the message loop, its handlers, and the reaper's rules.

Admission (``gymforge.serve.hub``) happens after the WebSocket handshake so that every
refusal is a readable ``error`` message followed by a close code: a bad Origin or token
closes with 1008, a full server with 1013. An admitted session owns one fresh environment
instance until it ends, however it ends (close message, disconnect, reaping, a fatal error,
server shutdown): the ``finally`` in ``Hub.handle`` always closes the environment and frees
the slot.

The reaper (always on) is one task per server that sweeps every session a few times per
``idle_timeout`` (at most once a second). Each session records its phase and since when:

- ``idle`` (waiting for a message) past ``idle_timeout``: an ``idle_timeout`` error, close
  4408, environment released. A half-open socket sends nothing, so it is reaped the same
  way (sooner when the transport's ping/pong notices the dead peer first);
- ``busy`` (inside an environment call) past ``request_timeout``: the call is cancelled, a
  fatal ``timeout`` error, close 1011;
- ``sending`` past ``send_timeout`` (a client that stopped reading): the session is dropped.

The message loop itself arms no timers, which keeps the per-message cost down."""

from __future__ import annotations

import asyncio
import dataclasses
import time
import uuid
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ValidationError
from starlette.websockets import WebSocketDisconnect

from gymforge.core.capabilities import TASK, TOOLSET, supported
from gymforge.core.env import SupportsOracle
from gymforge.core.errors import EpisodeStateError, UnknownTaskError
from gymforge.core.policy import episode_context
from gymforge.core.types import Task
from gymforge.kit.redteam import AttackNotApplicable
from gymforge.serve import protocol as p
from gymforge.serve.fast_step import step_frame, step_message
from gymforge.serve.frames import FrameError, decode_frame
from gymforge.serve.metrics import Metrics
from gymforge.serve.sockets import SessionSocket
from gymforge.serve.tape import EpisodeTape, elapsed_ms
from gymforge.tools.toolset import Toolset

if TYPE_CHECKING:
    from gymforge.serve.hub import Hub


DUMPED = frozenset({"observation", "task", "action"})
"""Reply keys every handler fills with a ``model_dump(mode="json")``: not walked by dumps."""


class Refused(Exception):
    """An operation the server declines; becomes an ``error`` reply with ``code``."""

    def __init__(self, code: p.ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code: p.ErrorCode = code


def _crash(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("injected tool crash")


async def refuse(ws: SessionSocket, code: p.ErrorCode, message: str, close_code: int) -> None:
    try:
        async with asyncio.timeout(5):
            await ws.send_text(p.error(code, message, fatal=True))
            await ws.close(close_code, message.encode()[:120].decode(errors="ignore"))
    except (TimeoutError, WebSocketDisconnect, RuntimeError, OSError):
        pass


class Session:
    """The message loop of one admitted connection. See the module docstring."""

    def __init__(self, ws: SessionSocket, hub: Hub) -> None:
        self.ws = ws
        self.hub = hub
        self.cfg = hub.config
        self.m = hub.metrics
        self.id = uuid.uuid4().hex[:16]
        self.env: Any = None
        self.original_tools: dict[str, Any] | None = None
        self.last_obs: Any = None
        self.policy: Any = None
        self.phase: Literal["idle", "busy", "sending"] = "sending"
        self.since = time.monotonic()
        self.killed: str | None = None
        self.task = asyncio.current_task()
        self.send_utf8: Any = getattr(ws, "send_utf8", None)  # a FastSocket's: text as UTF-8
        recording = hub.recorder.writer is not None  # else no snapshot per step for records
        self.tape = EpisodeTape(hub.recorder, self.id, "ws", self.m) if recording else None

    def check(self, now: float) -> None:
        """The reaper's verdict on this session: idle too long (reaped with an error and
        close 4408), an environment call over ``request_timeout`` or a send over
        ``send_timeout`` (a client that stopped reading): the handler is cancelled."""
        if self.killed is not None:
            return
        waited = now - self.since
        if self.phase == "idle" and waited > self.cfg.idle_timeout:
            self.killed = "idle_timeout"
            self.m.sessions_reaped += 1
            self.m.errors["idle_timeout"] += 1
            asyncio.get_running_loop().create_task(self._reap_idle())
        elif self.phase == "busy" and waited > self.cfg.request_timeout:
            self.killed = "timeout"
        elif self.phase == "sending" and waited > self.cfg.send_timeout:
            self.killed = "send_timeout"
            self.m.errors["send_timeout"] += 1
        if self.killed in ("timeout", "send_timeout") and self.task is not None:
            self.task.cancel()

    async def _reap_idle(self) -> None:
        text = f"no message for {self.cfg.idle_timeout:g} s; session reaped"
        await refuse(self.ws, "idle_timeout", text, p.CLOSE_IDLE)
        await asyncio.sleep(1.0)  # the close normally ends the handler; a dead peer may not
        if self.task is not None and not self.task.done():
            self.task.cancel()

    def _absorb_cancel(self) -> bool:
        """True when a CancelledError came from the reaper (and is absorbed here)."""
        if self.killed is None:
            return False
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
        return True

    async def run(self) -> None:
        try:
            self.env = self.hub.catalog.factory()
        except Exception as err:
            self.m.errors["env_error"] += 1
            text = f"could not create the environment: {type(err).__name__}: {err}"
            await refuse(self.ws, "env_error", text, p.CLOSE_INTERNAL)
            return
        toolset = self._toolset()
        self.original_tools = dict(toolset.tools) if toolset is not None else None
        hello = {
            "type": "hello",
            "protocol": p.PROTOCOL_VERSION,
            "session": self.id,
            "env": p.spec_json(self.env.spec),
            "limits": self.cfg.limits(),
        }
        if not await self._send(p.dumps(hello)):
            return
        while self.killed is None:
            self.phase, self.since = "idle", _now()
            try:
                frame = await self.ws.receive()
            except (WebSocketDisconnect, RuntimeError, OSError):
                return
            if frame["type"] == "websocket.disconnect" or self.killed is not None:
                return
            raw = frame.get("text")
            if raw is None:
                raw = frame.get("bytes") or b""
            self.phase, self.since = "busy", _now()
            reply, close_code = await self._dispatch(raw)
            self.phase, self.since = "sending", _now()  # as ``_send``, without its coroutine
            try:
                if type(reply) is bytes:
                    await self.send_utf8(reply)
                else:
                    await self.ws.send_text(reply)  # type: ignore[arg-type]  # str
            except (WebSocketDisconnect, RuntimeError, OSError):
                return
            except asyncio.CancelledError:
                if self._absorb_cancel():
                    return
                raise
            if close_code is not None:
                try:
                    async with asyncio.timeout(5):
                        await self.ws.close(close_code)
                except (TimeoutError, WebSocketDisconnect, RuntimeError, OSError):
                    pass
                return

    async def _send(self, text: str) -> bool:
        self.phase, self.since = "sending", _now()
        try:
            await self.ws.send_text(text)
            return True
        except (WebSocketDisconnect, RuntimeError, OSError):
            return False
        except asyncio.CancelledError:
            if self._absorb_cancel():
                return False
            raise

    async def release(self) -> None:
        """Write the open episode, if recording (unfinished, with how the session ended),
        then close the environment. Idempotent."""
        if self.tape is not None:
            await self.tape.abandon(self.env, self._end_reason())
        env, self.env, self.policy = self.env, None, None
        await close_env(env, self.m)

    def _end_reason(self) -> str:
        if self.killed == "idle_timeout":
            return "idle_timeout"
        if self.killed == "timeout":
            return "request_timeout"
        return "server_shutdown" if self.hub.stopping else "session_closed"

    # ---- dispatch -----------------------------------------------------------------------
    async def _dispatch(self, raw: str | bytes) -> tuple[str | bytes, int | None]:
        """The reply to one frame (its text, or that text's UTF-8 for ``send_utf8``), and
        the close code to send after it (fatal errors)."""
        self.m.messages += 1
        t0 = time.perf_counter()
        msg = step_frame(raw, self.cfg.max_message_bytes)  # the common step; else None
        if msg is None:
            data = decode_frame(raw, self.cfg.max_message_bytes)
            if isinstance(data, FrameError):  # not a message: answer, then close the session
                return self._err(data.code, data.message, fatal=True), data.close_code
            msg = step_message(data)  # the common step, as validation makes it; else None
            if msg is None:
                try:
                    msg = p.CLIENT_ADAPTER.validate_python(data)
                except ValidationError as err:
                    return self._invalid(data, err), None
        close_code: int | None = None
        try:
            reply = await _HANDLERS[msg.type](self, msg)
            reply["id"] = msg.id
            utf8 = self.send_utf8 is not None
            text = p.dumps_utf8(reply, DUMPED) if utf8 else p.dumps(reply, DUMPED)
            if msg.type == "close":
                close_code = p.CLOSE_NORMAL
        except asyncio.CancelledError:
            if not self._absorb_cancel():
                raise
            limit = self.cfg.request_timeout
            text = self._err("timeout", f"{msg.type} took over {limit:g} s", msg.id, True)
            close_code = p.CLOSE_INTERNAL
        except Refused as err:
            text = self._err(err.code, str(err), msg.id)
        except EpisodeStateError as err:
            text = self._err("episode_state", str(err), msg.id)
        except UnknownTaskError as err:
            text = self._err("unknown_task", str(err), msg.id)
        except AttackNotApplicable as err:
            text = self._err("not_applicable", str(err), msg.id)
        except NotImplementedError as err:
            text = self._err("unsupported", str(err) or "not implemented", msg.id)
        except ValueError as err:  # includes NaN/infinity in a reply: not JSON
            text = self._env_error(err, msg.id)
        except Exception as err:
            text = self._env_error(err, msg.id)
        self.m.observe(msg.type, (time.perf_counter() - t0) * 1e3)
        return text, close_code

    def _invalid(self, data: dict[str, Any], err: ValidationError) -> str:
        msg_id = data.get("id") if isinstance(data.get("id"), int | str) else None
        kinds = {e["type"] for e in err.errors()}
        if "union_tag_invalid" in kinds:
            known = ", ".join(p.MESSAGE_TYPES)
            text = f"unknown message type {str(data.get('type'))[:50]!r}; known: {known}"
            return self._err("unknown_type", text, msg_id)
        return self._err("bad_message", _summary(err), msg_id)

    def _err(self, code: p.ErrorCode, message: str, msg_id: Any = None, fatal: bool = False) -> str:
        self.m.errors[code] += 1
        return p.error(code, message, msg_id, fatal)

    def _env_error(self, err: BaseException, msg_id: Any) -> str:
        return self._err("env_error", f"{type(err).__name__}: {str(err)[:1000]}", msg_id)

    # ---- handlers: each returns the reply dict (without id) or raises --------------------
    async def _on_reset(self, msg: p.ResetMsg) -> dict[str, Any]:
        if self.tape is not None:  # an open episode counts, unfinished
            await self.tape.abandon(self.env, "abandoned")
        t0 = time.perf_counter()
        obs = await self.env.reset(msg.task_id, msg.seed)
        self.last_obs = obs
        if self.tape is not None:
            await self.tape.reset(self.env, msg.task_id, msg.seed, obs, elapsed_ms(t0))
        current = supported(self.env, TASK)
        task = current.task if current is not None else None
        reply: dict[str, Any] = {
            "type": "reset_result",
            "observation": p.observation_dump(obs),
            "task": p.task_view(task, self.cfg.qa_hooks) if isinstance(task, Task) else None,
        }
        if msg.state:
            reply["state"] = await self.env.snapshot()
        reply["server_ms"] = (time.perf_counter() - t0) * 1e3
        return reply

    async def _on_step(self, msg: p.StepMsg) -> dict[str, Any]:
        t0 = time.perf_counter()
        result = await self.env.step(msg.action)
        self.last_obs = result.observation
        if self.tape is not None and self.tape.open:
            await self.tape.step(self.env, msg.action, result, elapsed_ms(t0))
        reply = p.step_reply(result, self.cfg.qa_hooks)
        if msg.state:
            reply["state"] = await self.env.snapshot()
        reply["server_ms"] = (time.perf_counter() - t0) * 1e3
        return reply

    async def _on_snapshot(self, msg: p.SnapshotMsg) -> dict[str, Any]:
        return {"type": "state", "state": await self.env.snapshot()}

    async def _on_oracle_action(self, msg: p.OracleActionMsg) -> dict[str, Any]:
        self._need_hooks()
        if not isinstance(self.env, SupportsOracle):
            raise Refused("unsupported", f"{self.env.spec.id} has no oracle")
        action = await self.env.oracle_action()
        return {"type": "action", "action": action.model_dump(mode="json")}

    async def _on_policy_start(self, msg: p.PolicyStartMsg) -> dict[str, Any]:
        self._need_hooks()
        case = self.hub.catalog.redteam_case(msg.case)
        if case is None:
            raise Refused("unsupported", f"no red-team case {msg.case!r}")
        policy = case.make_policy()
        await policy.start(episode_context(policy, self.env, msg.task_id, msg.seed))
        self.policy = policy
        return {"type": "ok"}

    async def _on_policy_act(self, msg: p.PolicyActMsg) -> dict[str, Any]:
        self._need_hooks()
        if self.policy is None or self.last_obs is None:
            raise EpisodeStateError("policy_act needs policy_start and then reset first")
        turn = await self.policy.act(self.last_obs)
        return {"type": "action", "action": turn.action.model_dump(mode="json")}

    async def _on_inject(self, msg: p.InjectMsg) -> dict[str, Any]:
        if not self.cfg.fault_injection:
            raise Refused("forbidden", "fault injection is disabled on this server")
        toolset = self._toolset()
        if self.original_tools is None or toolset is None:
            raise Refused("unsupported", f"{self.env.spec.id} has no toolset to inject into")
        if msg.fault_plan is not None:
            toolset.set_fault_plan(msg.fault_plan.to_plan())
        if msg.crash_tools is not None:
            crash = set(msg.crash_tools)
            toolset.tools = {
                n: dataclasses.replace(t, fn=_crash) if n in crash else t
                for n, t in self.original_tools.items()
            }
        self.m.faults_injected += 1
        return {"type": "ok"}

    def _toolset(self) -> Toolset | None:
        """The served environment's toolset, when it has gymforge tools to inject into."""
        found = supported(self.env, TOOLSET)
        toolset = found.toolset if found is not None else None
        return toolset if isinstance(toolset, Toolset) else None

    async def _on_ping(self, msg: p.PingMsg) -> dict[str, Any]:
        return {"type": "pong"}

    async def _on_close(self, msg: p.CloseMsg) -> dict[str, Any]:
        return {"type": "closed"}

    def _need_hooks(self) -> None:
        if not self.cfg.qa_hooks:
            raise Refused("forbidden", "QA hooks (oracle, red-team cases) are off on this server")


_HANDLERS: dict[str, Any] = {kind: getattr(Session, f"_on_{kind}") for kind in p.MESSAGE_TYPES}
"""Each message type's handler (``Session._on_<type>``)."""
_now = time.monotonic


def _summary(err: ValidationError) -> str:
    parts = []
    for e in err.errors()[:3]:
        loc = ".".join(str(x) for x in e["loc"]) or "message"
        parts.append(f"{loc}: {e['msg']}")
    return "; ".join(parts)


async def close_env(env: Any, metrics: Metrics) -> None:
    """Close a released session's environment within 10 s; a close that fails or hangs is
    counted (``env_close``) and never keeps the slot."""
    if env is None:
        return
    try:
        async with asyncio.timeout(10):
            await env.close()
    except Exception:
        metrics.errors["env_close"] += 1
