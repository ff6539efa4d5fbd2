"""How the proxy serves one chat request: token-in or pass-through, and what it records.

See :mod:`gymforge.serve.proxy.server` for the routes; this module is the request path
behind ``POST /e/{id}/v1/chat/completions``. The upstream's refusal (a 4xx) of the request
the proxy makes for a turn goes back to the client as that 4xx, whichever request it was:
the chat or completions endpoint's, or a ``/tokenize`` rendering of the new messages
(:func:`upstream_refusal`); only the upstream failing (unreachable, 429, 5xx, a bad answer)
is a 502 or 504.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import aiohttp
from aiohttp import web

from gymforge.rollout.chat_template import TemplateError
from gymforge.rollout.parsing import chat_logprobs
from gymforge.rollout.server import PolicyRequestRejected
from gymforge.rollout.tokenize_endpoint import TokenInUnsupported
from gymforge.serve.proxy import sse
from gymforge.serve.proxy.continuation import Continuation
from gymforge.serve.proxy.transcript import EpisodeTranscript, ProxyTurn

if TYPE_CHECKING:
    from gymforge.serve.proxy.config import ProxyConfig


class Forwarder:
    """Serves chat requests against the upstream (module docstring). ``http`` is set once
    the proxy's loop runs; ``weight_version`` reads the version to record."""

    def __init__(
        self,
        config: ProxyConfig,
        continuation: Continuation,
        weight_version: Callable[[], str | None],
    ) -> None:
        self.config = config
        self.continuation = continuation
        self.weight_version = weight_version
        self.http: aiohttp.ClientSession | None = None
        self.token_in_disabled: str | None = None  # why token-in was switched off
        self.answered = 0  # whole turns answered, every episode's (proxy.crash)

    async def chat(
        self,
        request: web.Request,
        transcript: EpisodeTranscript,
        body: dict[str, Any],
        messages: list[dict[str, Any]],
    ) -> web.StreamResponse:
        tools = body.get("tools") or None
        found = transcript.extension(messages, tools)
        if found is not None and self.config.token_in and self.token_in_disabled is None:
            try:
                return await self._token_in(request, transcript, body, found)
            except TokenInUnsupported as err:
                self.token_in_disabled = str(err)  # not vLLM: pass every request through
            except TemplateError:
                pass  # this template cannot continue these messages: a new branch
        return await self._pass_through(request, transcript, body)

    async def _token_in(
        self,
        request: web.Request,
        transcript: EpisodeTranscript,
        body: dict[str, Any],
        found: tuple[ProxyTurn, list[dict[str, Any]]],
    ) -> web.StreamResponse:
        previous, new_messages = found
        model = str(body.get("model"))
        tools = body.get("tools") or None
        try:
            prompt = await self.continuation.prompt(previous, new_messages, tools, model)
            room = None
            if not (body.get("max_completion_tokens") or body.get("max_tokens")):
                room = await self.continuation.room(model, prompt)
        except PolicyRequestRejected as err:
            refused = upstream_refusal(err)
            if refused is None:
                raise
            return refused
        if room is not None and room < 1:  # what vLLM's chat endpoint answers here
            message = (
                f"This model's maximum context length is {room + len(prompt)} tokens. "
                f"However, your prompt contains at least {len(prompt)} input tokens."
            )
            error = {"message": message, "type": "BadRequestError", "code": 400}
            return web.json_response({"error": error}, status=400)
        completion_body = self.continuation.completion_body(body, prompt, room)
        assert self.http is not None
        url = self.config.upstream.rstrip("/") + "/completions"
        async with self.http.post(url, json=completion_body) as r:
            raw = await r.read()
            if r.status != 200:
                return web.Response(body=raw, status=r.status, content_type="application/json")
        call_id = f"call_{len(transcript.turns)}"  # unique in the episode, and deterministic
        response, completion, logprobs = await self.continuation.chat_response(
            body, prompt, json.loads(raw), call_id
        )
        turn = ProxyTurn(
            index=len(transcript.turns),
            branch=transcript.branch_of(prompt),
            mode="token-in",
            stream=bool(body.get("stream")),
            messages=body["messages"],
            tools=tools,
            response_message=response["choices"][0]["message"],
            prompt_token_ids=prompt,
            completion_token_ids=completion,
            logprobs=logprobs,
            finish_reason=response["choices"][0]["finish_reason"],
            model=response.get("model"),
            weight_version=self.weight_version(),
        )
        transcript.add(turn)
        self.answered += 1
        if not body.get("stream"):
            return web.json_response(response)
        return await sse.respond(request, response, body)

    async def _pass_through(
        self,
        request: web.Request,
        transcript: EpisodeTranscript,
        body: dict[str, Any],
    ) -> web.StreamResponse:
        asked_ids, asked_lp = bool(body.get("return_token_ids")), bool(body.get("logprobs"))
        sent = {**body, "return_token_ids": True, "logprobs": True}
        assert self.http is not None
        url = self.config.upstream.rstrip("/") + "/chat/completions"
        stream = bool(body.get("stream"))
        async with self.http.post(url, json=sent) as r:
            if r.status != 200 or not stream:
                raw = await r.read()
                if r.status != 200:
                    return web.Response(body=raw, status=r.status, content_type="application/json")
                data = json.loads(raw)
                self._record(transcript, body, data, stream)
                if not (asked_ids and asked_lp):
                    raw = json.dumps(strip_added(data, asked_ids, asked_lp)).encode()
                return web.Response(body=raw, content_type="application/json")
            out = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await out.prepare(request)
            chunks: list[dict[str, Any]] = []
            unchanged = asked_ids and asked_lp
            recorded = False
            open_event = False  # a line passed on as it came, its event not yet ended
            async for line in r.content:
                parsed = list(sse.decode_lines([line]))
                chunks.extend(parsed)
                if not recorded and (line.strip() == sse.DONE.strip() or _finishes(parsed)):
                    # before the harness has the whole reply: it may act on it at once (its
                    # next request, a tool call the runner pairs with this turn)
                    self._record(transcript, body, sse.merge_chunks(chunks), stream)
                    recorded = True
                if unchanged or not parsed:
                    # a rewritten chunk ends its own event: the upstream's blank line after
                    # it is dropped, the one after a line passed on (``[DONE]``) kept
                    if unchanged or line.strip() or open_event:
                        await out.write(line)
                    open_event = not unchanged and bool(line.strip())
                    continue
                await out.write(sse.encode(strip_added(parsed[0], asked_ids, asked_lp)))
                open_event = False
            if not recorded:  # a stream that ended without a finish reason or [DONE]
                self._record(transcript, body, sse.merge_chunks(chunks), stream)
            await out.write_eof()
            return out

    def _record(
        self,
        transcript: EpisodeTranscript,
        body: dict[str, Any],
        data: dict[str, Any],
        stream: bool,
    ) -> None:
        choice = (data.get("choices") or [{}])[0]
        ids = choice.get("token_ids")
        prompt = data.get("prompt_token_ids")
        # as the server returned them, whatever their count: the export refuses a turn
        # whose logprobs do not match its ids one to one (dropped, it would pass as a turn
        # the server gave none for)
        logprobs = chat_logprobs(choice.get("logprobs"))
        message = dict(choice.get("message") or {"role": "assistant", "content": None})
        transcript.add(
            ProxyTurn(
                index=len(transcript.turns),
                branch=transcript.branch_of(prompt if isinstance(prompt, list) else None),
                mode="pass-through",
                stream=stream,
                messages=body["messages"],
                tools=body.get("tools") or None,
                response_message=message,
                prompt_token_ids=prompt if isinstance(prompt, list) else None,
                completion_token_ids=ids if isinstance(ids, list) else None,
                logprobs=logprobs,
                finish_reason=choice.get("finish_reason"),
                model=data.get("model"),
                weight_version=self.weight_version(),
            )
        )
        self.answered += 1


def _finishes(chunks: list[dict[str, Any]]) -> bool:
    """Whether one of ``chunks`` ends the reply's first choice (a finish reason: its last
    chunk with content; only a usage chunk follows it). A streamed turn is recorded then,
    before that chunk goes on, so it is in the transcript before the harness can act on
    the whole reply."""
    return any(
        c.get("index", 0) == 0 and c.get("finish_reason") is not None
        for chunk in chunks
        for c in chunk.get("choices") or []
    )


def strip_added(data: dict[str, Any], ids: bool, logprobs: bool) -> dict[str, Any]:
    """``data`` without the fields the proxy asked for on the harness's behalf."""
    out = dict(data)
    if not ids:
        out.pop("prompt_token_ids", None)
    choices = []
    for c in out.get("choices") or []:
        c = dict(c)
        if not ids:
            c.pop("token_ids", None)
        if not logprobs:
            c["logprobs"] = None
        choices.append(c)
    if "choices" in out:
        out["choices"] = choices
    return out


def upstream_refusal(err: PolicyRequestRejected) -> web.Response | None:
    """The upstream's refusal of a request the proxy made for a turn (a ``/tokenize``
    rendering of the harness's new messages), answered to the harness as the upstream's own
    4xx, as a refusal of the chat endpoint is: a guardrail refusing what the agent wrote
    must not read as the server failing (a 502 marks the episode's server as failed, and a
    harness that falls over on it is then retried, never counted). None for what is not a
    4xx of the upstream's (``TokenInUnsupported``: token-in is switched off). The message is
    the upstream's own (``detail``), never the client's wording, which names the upstream's
    URL: the harness is never told where the upstream is."""
    if isinstance(err, TokenInUnsupported) or err.status is None or not 400 <= err.status < 500:
        return None
    message = f"the upstream refused a rendering of the new messages: {err.detail}"
    error = {"message": message, "type": "BadRequestError", "code": err.status}
    return web.json_response({"error": error}, status=err.status)
