"""Harness policies: an outside agent program plays the episode through its own loop.

- ``harness:pkg.module:func``: ``func(ctx)`` (sync or async) is called once per episode
  with a :class:`HarnessContext`; its return value is the final message;
- ``harness-cmd:COMMAND``: ``COMMAND`` runs once per episode (through ``/bin/sh``),
  confined (:mod:`~gymforge.serve.harness.confine`: its own user, pid namespace and
  filesystem view, a network namespace holding only its two endpoints
  (:mod:`~gymforge.serve.harness.netrelay`), an allow-listed environment, killed with
  everything it started when the episode ends), with ``OPENAI_BASE_URL``,
  ``OPENAI_API_KEY``, ``GYMFORGE_MODEL``, ``GYMFORGE_MCP_URL``, ``GYMFORGE_EPISODE`` and
  ``GYMFORGE_PROMPT_FILE`` (a JSON file: prompt, messages, tools) set; its standard
  output, stripped, is the final message, and a non-zero exit is a crash. Where it cannot
  be confined (no bubblewrap, no namespaces), the policy refuses to start, in one line that
  names what is missing.

``mode="workspace"`` (``--harness-mode workspace``) gives the harness a shell instead of the
MCP tools (:mod:`~gymforge.serve.harness.shell`): ``GYMFORGE_SHELL_URL`` and ``gymforge-sh``
on its ``PATH`` in place of ``GYMFORGE_MCP_URL``, each command one ``ToolCall`` of the
environment's shell tool (:mod:`gymforge.tools.shell`). Before it starts, the tool calls
of the shell tool's briefing (if any) are played as steps, and their results complete its
instruction (``prompt``, ``GYMFORGE_INSTRUCTION_FILE``).

Each episode has a token of its own (``HarnessContext.api_key``), which opens its proxy URL
and its MCP URL and nothing else: not another episode's, not the proxy's control routes
(the weight version is the runner's alone). A harness learns its episode by an opaque
handle (``episode_id``), never the task id or the environment seed.

The harness talks to the model through the episode's own base URL on a
:class:`~gymforge.serve.proxy.server.ProxyServer` (every request recorded with exact token
ids) and to the environment through the episode's MCP endpoint
(:mod:`~gymforge.serve.harness.bridge`), where each tool call becomes one ``ToolCall``
step: the step's policy record carries the proxy turns that led to it (``model_turns``).
When the harness returns or exits, its final message is the ``Reply`` action. The episode
ends when the environment ends it (the harness's pending call is answered, and it gets
``grace_s`` to exit before it is cancelled or killed) or when the harness has run for
``wall_clock_s`` without a final message (truncated, ``harness_timeout``); if the
environment wants more after the final message, the episode ends truncated
(``harness_exited``). A harness that raises or exits non-zero after it acted (a model turn
through its proxy, or a step) is the policy's counted failure, truncated
(``harness_crashed``); before that, or after its inference server failed it (unreachable,
429, 5xx), it is an infrastructure error: retried, never scored.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import secrets
import threading
import time
import urllib.request
from collections.abc import Callable
from typing import Any

import mcp_types as types

from gymforge.core.errors import (
    HarnessCrashed,
    HarnessExited,
    HarnessTimedOut,
    InfraError,
    UserError,
)
from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.core.types import Observation, Reply, ToolCall
from gymforge.registry.resolve import load_module
from gymforge.rollout.capture import CapturedTurn
from gymforge.sandbox.backend import IsolationUnavailableError
from gymforge.sandbox.confine import DEFAULT_UID, confinement_problem
from gymforge.serve.harness.bridge import Channel, HarnessBridge, mcp_tool_list
from gymforge.serve.harness.command import ConfinedCommand
from gymforge.serve.harness.context import HarnessContext
from gymforge.serve.proxy.server import ProxyConfig, ProxyServer
from gymforge.tools.shell import ShellTool

RESULT_LIMIT = 64_000
MODES = ("tools", "workspace")


Target = Callable[[HarnessContext], Any]


class HarnessPolicyFactory:
    """Makes one :class:`HarnessPolicy` per episode; owns the run's proxy and bridge,
    started on first use and stopped by :meth:`aclose`."""

    def __init__(
        self,
        spec: str,
        *,
        upstream: str,
        model: str | None = None,
        api_key: str | None = None,
        grace_s: float = 5.0,
        wall_clock_s: float = 600.0,
        checkpoint: str | None = None,
        paths: tuple[str, ...] = (),
        hidden: tuple[str, ...] = (),
        uid: int = DEFAULT_UID,
        mode: str = "tools",
        shell: ShellTool | None = None,
    ) -> None:
        kind, _, target = spec.partition(":")
        if kind not in ("harness", "harness-cmd") or not target:
            raise UserError(
                f"policy spec must be harness:pkg.module:func or harness-cmd:COMMAND, got {spec!r}"
            )
        self.spec, self.kind, self.target = spec, kind, target
        self.function: Target | None = _import_target(target) if kind == "harness" else None
        if kind == "harness-cmd":
            problem = confinement_problem()
            if problem is not None:
                raise IsolationUnavailableError(
                    f"harness-cmd: cannot confine the harness here: {problem}; run "
                    "`gymforge sandbox doctor`"
                )
        if mode not in MODES:
            raise UserError(f"--harness-mode must be one of {', '.join(MODES)}, got {mode!r}")
        if mode == "workspace" and shell is None:
            raise UserError("--harness-mode workspace: the environment has no shell tool")
        self.mode, self.shell = mode, shell if mode == "workspace" else None
        self.paths, self.hidden, self.uid = tuple(paths), tuple(hidden), uid
        self.upstream, self.api_key = upstream, api_key
        self.model = model
        self.grace_s, self.wall_clock_s = grace_s, wall_clock_s
        self.checkpoint = checkpoint or spec
        self.token = secrets.token_urlsafe(24)  # the runner's: control routes; never a harness's
        self.proxy: ProxyServer | None = None
        self.bridge: HarnessBridge | None = None
        self._starting = threading.Lock()

    def __call__(self) -> HarnessPolicy:
        return HarnessPolicy(self)

    def ensure_started(self) -> tuple[ProxyServer, HarnessBridge, str]:
        """The run's proxy, bridge and model name, started once (episodes starting at the
        same time call this from several threads)."""
        with self._starting:
            if self.proxy is None:
                config = ProxyConfig(
                    upstream=self.upstream,
                    upstream_api_key=self.api_key,
                    token=self.token,
                    idle_timeout=self.wall_clock_s + self.grace_s,  # finish() closes episodes
                )
                self.proxy = ProxyServer(config).start()
            if self.bridge is None:
                self.bridge = HarnessBridge(self.token).start()
            if self.model is None:
                self.model = _first_model(self.upstream, self.api_key)
            return self.proxy, self.bridge, self.model

    async def aclose(self) -> None:
        if self.proxy is not None:
            await asyncio.to_thread(self.proxy.stop)
            self.proxy = None
        if self.bridge is not None:
            await asyncio.to_thread(self.bridge.stop)
            self.bridge = None


class HarnessPolicy:
    """One harness-driven episode (module docstring)."""

    def __init__(self, factory: HarnessPolicyFactory) -> None:
        self.factory = factory
        self.name = factory.spec
        self.checkpoint = factory.checkpoint
        self.weight_version: str | None = None
        self.episode_id = ""
        self.channel: Channel | None = None
        self.task: asyncio.Task[str] | None = None
        self.pending: Any = None  # the answer future of the harness's current tool call
        self.seen = 0
        self.calls = 0
        self.started = 0.0
        self.ctx: EpisodeContext | None = None
        self.command = ConfinedCommand(factory.target, factory.paths, factory.hidden, factory.uid)
        self.exited = False
        self.acted = False  # a step of the harness's own (briefing steps are not)
        self.briefing: list[tuple[str, dict[str, Any]]] | None = None
        self.reset_observation: Observation | None = None
        self.instruction: list[str] = []

    async def start(self, ctx: EpisodeContext) -> None:
        self.ctx = ctx
        self.episode_id = f"h{secrets.token_hex(8)}"

    async def act(self, observation: Observation) -> PolicyTurn:
        proxy, bridge, _ = await asyncio.to_thread(self.factory.ensure_started)
        shell = self.factory.shell
        if self.task is None and shell is not None:
            if self.briefing is None:  # the reset observation
                self.reset_observation = observation
                found = shell.briefing(observation.text()) if shell.briefing else ()
                self.briefing, self.instruction = list(found), [observation.text()]
            else:
                self.instruction.append(observation.text())
            if self.briefing:
                name, arguments = self.briefing.pop(0)
                self.calls += 1
                return self._turn(
                    ToolCall(name=name, arguments=arguments, call_id=f"call_{self.calls}")
                )
            assert self.reset_observation is not None
            observation = self.reset_observation
        if self.task is None:
            self._launch(observation, proxy, bridge)
        elif self.pending is not None:
            if shell is not None:
                self.pending.set_result(
                    shell.outcome(observation.data.get("tool_result")).as_json()
                )
            else:
                self.pending.set_result(_result_of(observation))
            self.pending = None
        assert self.channel is not None
        if self.exited:
            raise HarnessExited(
                "the harness gave its final message but the environment did not end the episode"
            )
        remaining = self.factory.wall_clock_s - (time.monotonic() - self.started)
        try:
            async with asyncio.timeout(max(0.0, remaining)):
                kind, a, b, answer = await self.channel.events.get()
        except TimeoutError:
            raise HarnessTimedOut(
                f"the harness ran {self.factory.wall_clock_s:g} s without a final message"
            ) from None
        if kind == "call":
            self.pending = answer
            self.calls += 1
            self.acted = True
            action = ToolCall(name=str(a), arguments=dict(b), call_id=f"call_{self.calls}")
            return self._turn(action)
        if kind == "shell" and shell is not None:
            self.pending = answer
            self.calls += 1
            self.acted = True
            arguments = shell.arguments(str(a))
            return self._turn(
                ToolCall(name=shell.name, arguments=arguments, call_id=f"call_{self.calls}")
            )
        if kind == "done":
            self.exited = True
            return self._turn(Reply(text=str(a)))
        raise self._crash(str(a))

    def _crash(self, error: str) -> Exception:
        """What a harness that fell over is: the policy's counted failure once it has acted
        (a model turn or a step of its own) with its inference server answering; an
        infrastructure error (retried, never scored) before that, or after the server
        failed it."""
        proxy = self.factory.proxy
        message = f"harness {self.factory.target} crashed: {error}"
        failure = proxy.upstream_failure(self.episode_id) if proxy is not None else None
        turns = 0
        if proxy is not None:
            with contextlib.suppress(UserError):  # its proxy episode already closed
                turns = len(proxy.transcript(self.episode_id).turns)
        if failure is None and (turns or self.acted):
            return HarnessCrashed(message)
        return InfraError(message if failure is None else f"{message} ({failure})")

    def _launch(self, observation: Observation, proxy: ProxyServer, bridge: HarnessBridge) -> None:
        assert self.ctx is not None
        loop = asyncio.get_running_loop()
        token = secrets.token_urlsafe(24)  # this episode's, for its proxy URL and MCP URL
        workspace = self.factory.shell is not None
        tools = [] if workspace else mcp_tool_list(observation.tools)
        self.channel = bridge.open(loop, tools, token=token, shell=workspace)
        url = bridge.channel_url(self.channel)
        hctx = HarnessContext(
            episode_id=self.episode_id,
            base_url=proxy.open_episode(self.episode_id, token=token),
            api_key=token,
            model=str(self.factory.model),
            prompt="\n\n".join(self.instruction) if workspace else observation.text(),
            mcp_url="" if workspace else url,
            messages=[m.model_dump(mode="json", exclude_none=True) for m in observation.messages],
            tools=[] if workspace else [dict(t) for t in observation.tools],
            sampling_seed=self.ctx.sampling_seed,
            shell_url=url if workspace else "",
        )
        self.started = time.monotonic()
        self.task = loop.create_task(self._run(hctx))
        self.task.add_done_callback(self._ended)

    async def _run(self, ctx: HarnessContext) -> str:
        if self.factory.function is not None:
            fn = self.factory.function
            if inspect.iscoroutinefunction(fn):
                final = await fn(ctx)
            else:
                final = await asyncio.to_thread(fn, ctx)
            return _final_text(final)
        return await self.command.run(ctx)

    def _ended(self, task: asyncio.Task[str]) -> None:
        if self.channel is None or task.cancelled():
            return
        err = task.exception()
        if err is None:
            self.channel.events.put_nowait(("done", task.result(), None, None))
        else:
            self.channel.events.put_nowait(("crashed", f"{type(err).__name__}: {err}", None, None))

    def _turn(self, action: ToolCall | Reply) -> CapturedTurn:
        proxy = self.factory.proxy
        launched = self.task is not None  # briefing steps come before the proxy episode
        turns = proxy.transcript(self.episode_id).turns if proxy and launched else []
        fresh = [t.as_record() for t in turns[self.seen :]]
        self.seen = len(turns)
        levels = {t["capture_level"] for t in fresh}
        level = "none" if not fresh else "tokens" if levels == {"tokens"} else "text"
        return CapturedTurn(
            action=action,
            capture_level=level,  # type: ignore[arg-type]
            finish_reason=fresh[-1]["finish_reason"] if fresh else None,
            model=fresh[-1]["model"] if fresh else None,
            weight_version=fresh[-1]["weight_version"] if fresh else None,
            model_turns=fresh,
        )

    async def finish(self) -> None:
        ended = None if self.factory.shell is not None else _ended_result()
        if self.pending is not None:
            self.pending.set_result(ended)
            self.pending = None
        if self.channel is not None and self.factory.bridge is not None:
            self.factory.bridge.close(self.channel)
            while not self.channel.events.empty():  # calls that came after the last step
                answer = self.channel.events.get_nowait()[3]
                if answer is not None and not answer.done():
                    answer.set_result(ended)
        if self.task is not None and not self.task.done():
            try:
                async with asyncio.timeout(self.factory.grace_s):
                    await asyncio.shield(self.task)
            except (TimeoutError, Exception):
                pass
            if not self.task.done():
                self.task.cancel()
            await self.command.kill()
        if self.factory.proxy is not None and self.episode_id:
            # not open when the episode ended before its first turn
            with contextlib.suppress(UserError):
                self.factory.proxy.close_episode(self.episode_id)


def _result_of(observation: Observation) -> types.CallToolResult:
    """The environment's answer to a tool call, as the harness's MCP result: the new
    messages' text, and the tool result (``isError`` when it failed) where there is one."""
    text = observation.text()[:RESULT_LIMIT]
    tool_result = observation.data.get("tool_result")
    failed = isinstance(tool_result, dict) and tool_result.get("ok") is False
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content={"tool_result": tool_result} if isinstance(tool_result, dict) else None,
        is_error=failed,
    )


def _ended_result() -> types.CallToolResult:
    text = "the episode has ended; give your final answer"
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _final_text(final: Any) -> str:
    """A harness's return value as the final message: a string, a message object or dict
    with ``content``, or a LangGraph-style state with ``messages``."""
    if final is None:
        return ""
    if isinstance(final, str):
        return final
    if isinstance(final, dict):
        if final.get("messages"):
            return _final_text(final["messages"][-1])
        if "content" in final:
            return str(final["content"] or "")
    content = getattr(final, "content", None)
    return str(content) if content is not None else str(final)


def _import_target(target: str) -> Target:
    module_name, sep, attr = target.rpartition(":")
    if not sep or not module_name or not attr:
        raise UserError(f"harness:{target}: give pkg.module:func (or path/to/file.py:func)")
    try:
        module = load_module(module_name)
    except ImportError as err:
        raise UserError(f"cannot import harness module {module_name!r}: {err}") from err
    fn = vars(module).get(attr)
    if not callable(fn):
        raise UserError(f"{module_name}:{attr} is not a callable harness(ctx)")
    return fn  # type: ignore[no-any-return]


def _first_model(upstream: str, api_key: str | None) -> str:
    req = urllib.request.Request(upstream.rstrip("/") + "/models")
    if api_key:
        req.add_header("Authorization", f"Bearer {api_key}")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            data = json.load(r)
        return str(data["data"][0]["id"])
    except (OSError, ValueError, KeyError, IndexError, TypeError) as err:
        raise InfraError(f"cannot read the model name from {upstream}/models: {err}") from err


def harness_policy_factory(
    spec: str, base_url: str | None = None, **options: Any
) -> HarnessPolicyFactory:
    """The factory for a CLI spec ``harness:...`` or ``harness-cmd:...`` (``base_url``: the
    inference server the proxy fronts)."""
    if not base_url:
        raise UserError(f"{spec}: a harness policy needs --base-url (the inference server)")
    known = {"model", "api_key", "grace_s", "wall_clock_s", "checkpoint", "paths", "hidden"}
    known |= {"mode", "shell"}
    unknown = sorted(set(options) - known - {"max_tokens", "temperature", "top_p"})
    if unknown:
        raise UserError(f"harness policies do not take {', '.join(unknown)}")
    return HarnessPolicyFactory(
        spec, upstream=base_url, **{k: v for k, v in options.items() if k in known}
    )
