"""One harness-driven episode (:mod:`~gymforge.serve.harness.policy` has the contract):
the harness launched on the first observation, each of its tool calls (or shell commands) a
step, its final message the ``Reply``; what a crash counts as; and the MCP results its calls
are answered with."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import secrets
import time
from typing import Any

import mcp_types as types
from pydantic import ValidationError

from gymforge.core.errors import (
    HarnessCrashed,
    HarnessExited,
    HarnessTimedOut,
    InfraError,
    UserError,
)
from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.core.types import Invalid, Observation, Reply, ToolCall
from gymforge.rollout.capture import CapturedTurn
from gymforge.rollout.parsing import MAX_ERROR_CHARS
from gymforge.serve.harness.bridge import Channel, HarnessBridge, mcp_tool_list
from gymforge.serve.harness.command import ConfinedCommand
from gymforge.serve.harness.context import HarnessContext
from gymforge.serve.harness.run import HarnessRun
from gymforge.serve.proxy.server import ProxyServer

RESULT_LIMIT = 64_000


def call_action(name: Any, arguments: Any, call_id: str) -> ToolCall | Invalid:
    """The action of a tool call the harness made. Its name and arguments are the model's
    (the harness read them from the model's answer), so a call that cannot be an action
    (arguments nested past ``core.types.MAX_NESTING``, which the JSON parsers on the way
    take) is the model's malformed output: an ``Invalid`` the environment judges as any
    policy's, never an exception out of the turn, which was an infrastructure error, retried
    as a fresh sample or left unwritten
    (tests/redteam/test_harness_deep_arguments_unwritten_red19.py)."""
    args = arguments if isinstance(arguments, dict) else {}
    try:
        return ToolCall(name=str(name), arguments=args, call_id=call_id)
    except ValidationError as err:
        errors = err.errors()
        reason = str(errors[0].get("msg")) if errors else str(err)
        error = f"tool call refused: {reason}"[:MAX_ERROR_CHARS]
        return Invalid(raw=_call_text(name, args), error=error)


def _call_text(name: Any, arguments: dict[str, Any]) -> str:
    """The call as text (what it counts against the token budget): its JSON, else its
    name alone (arguments past what ``json`` can write)."""
    try:
        body = json.dumps(arguments, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        body = "{}"
    return f'<tool_call>{{"name": {json.dumps(str(name))}, "arguments": {body}}}</tool_call>'


class HarnessPolicy:
    """One harness-driven episode (module docstring)."""

    def __init__(self, factory: HarnessRun) -> None:
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
            return self._turn(call_action(a, b, f"call_{self.calls}"))
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
        raise await self._crash(str(a))

    async def _crash(self, error: str) -> Exception:
        """What a harness that fell over is: the policy's counted failure once it has acted
        (a model turn or a step of its own) with its inference server answering, or when
        the server's failure was the model's doing (a failure on its text, a first answer
        too long to wait for: :mod:`gymforge.serve.proxy.crash`); an infrastructure error
        (retried, never scored) before that, or after the server failed it."""
        proxy = self.factory.proxy
        message = f"harness {self.factory.target} crashed: {error}"
        failure = proxy.upstream_failure(self.episode_id) if proxy is not None else None
        turns = 0
        if proxy is not None:
            with contextlib.suppress(UserError):  # its proxy episode already closed
                turns = len(proxy.transcript(self.episode_id).turns)
        if failure is None and (turns or self.acted):
            return HarnessCrashed(message)
        why = await proxy.judge_crash(self.episode_id) if proxy is not None else None
        if why is not None:
            return HarnessCrashed(f"{message} ({why})")
        return InfraError(message if failure is None else f"{message} ({failure})")

    def _launch(self, observation: Observation, proxy: ProxyServer, bridge: HarnessBridge) -> None:
        assert self.ctx is not None
        loop = asyncio.get_running_loop()
        token = secrets.token_urlsafe(24)  # this episode's, for its proxy URL and MCP URL
        model = str(self.factory.model)  # the only model its proxy URL serves
        workspace = self.factory.shell is not None
        tools = [] if workspace else mcp_tool_list(observation.tools)
        self.channel = bridge.open(loop, tools, token=token, shell=workspace)
        url = bridge.channel_url(self.channel)
        hctx = HarnessContext(
            episode_id=self.episode_id,
            base_url=proxy.open_episode(self.episode_id, token=token, model=model),
            api_key=token,
            model=model,
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

    def _turn(self, action: ToolCall | Reply | Invalid) -> CapturedTurn:
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
    failed = failed or "parse_error" in observation.data  # a call that was no action
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
