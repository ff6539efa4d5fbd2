"""One MCP session: one environment instance, its episodes, and their trajectory records.

Every ``tools/call`` of the session is one operation on its environment:
``gymforge_tasks`` samples task ids (not a step), ``gymforge_reset(task_id, seed)`` starts
an episode, ``gymforge_submit(reply)`` is the ``Reply`` action, and any other name is a
``ToolCall`` action. The server's metrics count the resets, the steps and the steps that
hit an injected fault (``faults_injected``), as the WebSocket server's do. Each operation becomes a
trajectory record built exactly as the runner builds it (``gymforge.rollout.episode``), so a
finished episode is an ordinary gymforge trajectory that ``gymforge replay`` replays. An
episode that ends otherwise (a new reset over it, the session closed, reaped, timed out or
shut down) is written too, truncated and unsuccessful, its ``failure_reason`` saying which
(``gymforge.serve.record.END_REASONS``): every episode a client starts is counted.
What a client is shown of a step's ``info`` is ``gymforge.trajectory.redact.public_info``'s.

Failures never become protocol errors: a call before a reset, after the episode ended,
with bad arguments, or an environment that raises comes back as an ``isError`` result with
``structuredContent.error = {code, message}``; a tool error of the environment is an
``isError`` result that is also a step (its reward and record count).

The hub's reaper (``gymforge.serve.hub``) applies the WebSocket server's rules: a session
with no call for ``idle_timeout`` is closed and its environment released; one environment
call may take ``request_timeout`` (past it the call fails with ``timeout`` and the session
is closed)."""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import TYPE_CHECKING, Any, Literal, Protocol

import mcp_types as types

from gymforge.core.env import StepResult
from gymforge.core.errors import EpisodeStateError, UnknownTaskError
from gymforge.core.types import Action, Message, Observation, Reply, ToolCall
from gymforge.serve.mcp.tools import (
    RESET,
    SUBMIT,
    TASKS,
    ToolArgsError,
    reset_args,
    sample_tasks,
    submit_args,
)
from gymforge.serve.record import Recorder
from gymforge.serve.session import close_env
from gymforge.serve.tape import EpisodeTape, elapsed_ms
from gymforge.trajectory.redact import public_info

if TYPE_CHECKING:
    from gymforge.serve.hub import Hub

ErrorCode = Literal[
    "episode_state", "bad_arguments", "unknown_task", "env_error", "timeout", "closed"
]


class Stoppable(Protocol):
    """What a session owns besides its environment and ends with it (its transports)."""

    async def stop(self) -> None: ...


def error_result(
    code: ErrorCode, message: str, terminated: bool = False, truncated: bool = False
) -> types.CallToolResult:
    """An ``isError`` result that is not a step of the episode: no reward, and the episode's
    end flags as they stand."""
    structured = {
        "error": {"code": code, "message": message},
        "reward": 0.0,
        "reward_components": {},
        "terminated": terminated,
        "truncated": truncated,
    }
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"{code}: {message}")],
        structured_content=structured,
        is_error=True,
    )


def _text(messages: tuple[Message, ...]) -> str:
    return "\n\n".join(m.content for m in messages)


class McpSession:
    """One MCP session of a served environment. ``call`` never raises for the client's
    mistakes or the environment's failures; see the module docstring."""

    def __init__(self, hub: Hub, client: tuple[str, str], recorder: Recorder) -> None:
        self.hub = hub
        self.client = client
        self.recorder = recorder
        self.id = secrets.token_hex(16)  # the session's URL: unguessable, 128 bits
        # the session's own bearer token: it opens this session's endpoint and nothing else
        self.token = secrets.token_urlsafe(24)
        self.env: Any = hub.catalog.factory()
        self.lock = asyncio.Lock()  # one call at a time: an episode is a sequence
        self.phase: Literal["idle", "busy"] = "idle"
        self.since = time.monotonic()
        self.killed: str | None = None
        self.tape = EpisodeTape(recorder, self.id, "mcp", hub.metrics)
        self.last_obs: Observation | None = None
        self.transports: Stoppable | None = None  # set by the HTTP app (none over stdio)

    # ---- the reaper's side ---------------------------------------------------------------
    def check(self, now: float) -> None:
        """No request (``touch``) nor call for ``idle_timeout``: the session is closed and
        its slot freed."""
        idle = self.phase == "idle" and now - self.since > self.hub.config.idle_timeout
        if self.killed is None and idle:
            self.killed = "idle_timeout"
            self.hub.metrics.sessions_reaped += 1
            self.hub.metrics.errors["idle_timeout"] += 1
            asyncio.get_running_loop().create_task(self.close())

    def touch(self) -> None:
        if self.phase == "idle":
            self.since = time.monotonic()

    async def close(self, why: str = "session_closed") -> None:
        if self.killed is None:
            self.killed = why
        await self.hub.leave(self, self.client)

    async def release(self) -> None:
        """End the session however it ended: write its open episode (the reason is how the
        session ended; ``server_shutdown`` when it had not), stop its transports, close
        its environment. Idempotent."""
        await self.tape.abandon(self.env, self.killed or "server_shutdown")
        transports, self.transports = self.transports, None
        if transports is not None:
            await transports.stop()
        env, self.env = self.env, None
        await close_env(env, self.hub.metrics)

    # ---- calls ---------------------------------------------------------------------------
    async def call(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """Run one ``tools/call`` (serialised per session)."""
        async with self.lock:
            if self.killed is not None or self.env is None:
                return error_result("closed", f"the session is closed ({self.killed})")
            self.phase, self.since = "busy", time.monotonic()
            t0 = time.perf_counter()
            try:
                async with asyncio.timeout(self.hub.config.request_timeout):
                    return await self._dispatch(name, arguments)
            except TimeoutError:
                limit = self.hub.config.request_timeout
                self.hub.metrics.errors["timeout"] += 1
                asyncio.get_running_loop().create_task(self.close("request_timeout"))
                return error_result("timeout", f"{name} took over {limit:g} s; session closed")
            finally:
                self.hub.metrics.messages += 1
                self.hub.metrics.observe(f"mcp_{_op(name)}", (time.perf_counter() - t0) * 1e3)
                self.phase, self.since = "idle", time.monotonic()

    async def _dispatch(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        try:
            if name == TASKS:
                found = sample_tasks(self.hub.catalog.tasks, arguments)
                text = "\n".join(found["task_ids"])
                return types.CallToolResult(
                    content=[types.TextContent(type="text", text=text)],
                    structured_content=found,
                )
            if name == RESET:
                task_id, seed = reset_args(arguments)
                return await self._reset(task_id, seed)
            action: Action
            if name == SUBMIT:
                action = Reply(text=submit_args(arguments))
            else:
                call_id = f"call_{len(self.tape.records or ())}"
                action = ToolCall(name=name, arguments=arguments, call_id=call_id)
            return await self._step(action)
        except ToolArgsError as err:
            return self._error("bad_arguments", str(err))
        except EpisodeStateError as err:
            return self._error("episode_state", str(err))
        except UnknownTaskError as err:
            return self._error("unknown_task", str(err))
        except Exception as err:  # the environment's failure, never the protocol's
            return self._error("env_error", f"{type(err).__name__}: {str(err)[:1000]}")

    def _error(self, code: ErrorCode, message: str) -> types.CallToolResult:
        self.hub.metrics.errors[code] += 1
        tape = self.tape
        end = tape.records[-1] if tape.ended and tape.records else {}
        return error_result(
            code, message, end.get("terminated", False), end.get("truncated", False)
        )

    async def _reset(self, task_id: str, seed: int) -> types.CallToolResult:
        await self.tape.abandon(self.env, "abandoned")  # an open episode counts, unfinished
        t0 = time.perf_counter()
        obs = await self.env.reset(task_id, seed)
        await self.tape.reset(self.env, task_id, seed, obs, elapsed_ms(t0))
        self.hub.metrics.ops["reset"] += 1
        self.last_obs = obs
        structured = {
            "episode_id": self.tape.base["episode_id"],
            "task_id": task_id,
            "seed": seed,
            "step": 0,
            "messages": [m.model_dump(mode="json") for m in obs.messages],
            "reward": 0.0,
            "reward_components": {},
            "terminated": False,
            "truncated": False,
        }
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=_text(obs.messages))],
            structured_content=structured,
        )

    async def _step(self, action: Action) -> types.CallToolResult:
        tape = self.tape
        if not tape.open:
            raise EpisodeStateError(
                f"no episode is running: call {RESET}(task_id, seed) first"
                if tape.records is None
                else f"the episode has ended: call {RESET}(task_id, seed) for the next"
            )
        t0 = time.perf_counter()
        result: StepResult = await self.env.step(action)
        step = await tape.step(self.env, action, result, elapsed_ms(t0))
        self.hub.metrics.ops["step"] += 1
        if "fault" in result.info:
            self.hub.metrics.faults_injected += 1
        new = _new_messages(self.last_obs, result.observation)
        self.last_obs = result.observation
        shown = public_info(result.info, self.hub.config.qa_hooks)  # the record keeps it all
        info = {k: v for k, v in shown.items() if k != "tool_result"}
        tool_result = result.info.get("tool_result")
        structured = {
            "episode_id": tape.base["episode_id"],
            "step": step,
            "messages": [m.model_dump(mode="json") for m in new],
            "tool_result": tool_result,
            "reward": result.reward,
            "reward_components": result.reward_components,
            "terminated": result.terminated,
            "truncated": result.truncated,
            "info": info,
        }
        failed = isinstance(tool_result, dict) and tool_result.get("ok") is False
        text = _text(new)
        if tape.ended and tape.records:
            total = tape.records[-1]["reward"]
            ended = f"episode ended: reward {total:g}, success {bool(result.info.get('success'))}"
            text = f"{text}\n\n{ended}" if text else ended
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content=structured,
            is_error=failed,
        )


def _new_messages(before: Observation | None, after: Observation) -> tuple[Message, ...]:
    """The messages ``after`` adds to ``before`` (all of them when it is not a continuation)."""
    if before is not None and after.messages[: len(before.messages)] == before.messages:
        return after.messages[len(before.messages) :]
    return after.messages


def _op(name: str) -> str:
    return {TASKS: "tasks", RESET: "reset", SUBMIT: "submit"}.get(name, "tool")
