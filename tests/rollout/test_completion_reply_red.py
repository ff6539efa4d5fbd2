"""Red team: answers the ``vllm:`` policy's default (lean) request path must read as its SDK
path (``request_path="fast"``, what the policy used before) reads them: a compressed answer
the server chose to send (a request without ``Accept-Encoding`` accepts any coding, RFC 9110
12.5.3), and a redirect of the completions endpoint (the SDK's transports follow it). The
lean client hands such an answer's request to the SDK, and the factory keeps to the SDK's
path from then on."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest
from aiohttp import web
from openai_helpers import arun
from test_vllm_policy import RESET, TASKS

from gymforge.core.policy import episode_context
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout.capture import CapturedTurn
from gymforge.rollout.server import PolicyServerError, Retry
from gymforge.rollout.vllm_policy import VLLMPolicyFactory
from gymforge.testing.openai_server import token_in

KIND = web.AppKey("kind", str)
SERVED = web.AppKey("served", list[str])
RETRY = Retry(max_attempts=2, base_delay=0.001, max_delay=0.002, call_timeout=10.0)


def answer(request: dict[str, Any]) -> bytes:
    """A vLLM completions answer echoing the request's prompt ids."""
    choice = {
        "index": 0,
        "text": "Done.",
        "logprobs": {"token_logprobs": [-0.5, -0.25], "tokens": ["Done", "."]},
        "finish_reason": "stop",
        "prompt_token_ids": token_in.prompt_ids(request),
        "token_ids": [5, 6],
    }
    return json.dumps({"model": "m", "choices": [choice]}).encode()


async def completions(request: web.Request) -> web.Response:
    body = answer(json.loads(await request.read()))
    request.app[SERVED].append(request.path)
    kind = request.app[KIND]
    if kind == "gzip":
        headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
        return web.Response(body=gzip.compress(body), headers=headers)
    if kind == "redirect" and request.path == "/v1/completions":
        raise web.HTTPTemporaryRedirect("/v2/completions")
    return web.Response(body=body, content_type="application/json")


async def tokenize(request: web.Request) -> web.Response:
    return web.json_response(token_in.tokenize(json.loads(await request.read()), 4096))


async def serve(app: web.Application, path: str) -> tuple[web.AppRunner, int, VLLMPolicyFactory]:
    """``app`` (with ``/tokenize`` added) served on 127.0.0.1, and a vllm policy factory
    on ``path`` pointed at it."""
    app.router.add_post("/tokenize", tokenize)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    made = VLLMPolicyFactory(
        "m",
        base_url=f"http://127.0.0.1:{port}/v1",
        retry=RETRY,
        tool_format="hermes",
        request_path=path,  # type: ignore[arg-type]
    )
    return runner, port, made


async def outcome(kind: str, path: str) -> tuple[Any, ...]:
    app = web.Application()
    app[KIND], app[SERVED] = kind, []
    app.router.add_post("/v1/completions", completions)
    app.router.add_post("/v2/completions", completions)
    runner, port, made = await serve(app, path)
    policy = made()
    try:
        await policy.start(episode_context(policy, LedgerEnv(), TASKS[0], 0))
        turn = await policy.act(RESET)
        assert isinstance(turn, CapturedTurn)
        result: tuple[Any, ...] = ("turn", turn.text, turn.completion_token_ids, turn.logprobs)
    except Exception as err:
        result = (type(err).__name__, str(err).replace(str(port), "PORT"))
    finally:
        await made.aclose()
        await runner.cleanup()
    return (*result, app[SERVED])


@pytest.mark.parametrize("kind", ["gzip", "redirect"])
def test_the_lean_path_reads_what_the_sdk_path_reads(kind: str) -> None:
    fast = arun(outcome(kind, "fast"))
    assert fast[0] == "turn", fast  # the policy's behaviour before the lean path
    lean = arun(outcome(kind, "auto"))
    assert lean[:-1] == fast[:-1]
    # the lean client's one request, handed to the SDK: every later one goes there at once
    assert lean[-1] == ["/v1/completions", *fast[-1]]


REFUSAL = {
    "error": {
        "message": "This model's maximum context length is 4096 tokens. However, you requested "
        "5000 tokens (1000 in the messages, 4000 in the completion). Please reduce the length "
        "of the messages or completion.",
        "type": "BadRequestError",
        "code": 400,
    }
}


async def refuse_then_cut(request: web.Request) -> web.Response:
    """A context-full refusal stating room for fewer tokens than were asked, then every
    request's connection cut."""
    await request.read()
    request.app[SERVED].append(request.path)
    if len(request.app[SERVED]) == 1:
        return web.json_response(REFUSAL, status=400)
    assert request.transport is not None
    request.transport.close()
    raise ConnectionResetError


async def cut_after_refusal(path: str) -> BaseException:
    app = web.Application()
    app[SERVED] = []
    app.router.add_post("/v1/completions", refuse_then_cut)
    runner, _, made = await serve(app, path)
    policy = made()
    try:
        await policy.start(episode_context(policy, LedgerEnv(), TASKS[0], 0))
        await policy.act(RESET)
    except Exception as err:
        assert app[SERVED] == ["/v1/completions"] * 3  # the refusal, then two attempts
        return err
    finally:
        await made.aclose()
        await runner.cleanup()
    raise AssertionError("the turn did not fail")


@pytest.mark.parametrize("path", ["fast", "lean"])
def test_a_cut_connection_after_a_refusal_is_not_blamed_on_the_refusal(path: str) -> None:
    """The resend with the room the refusal states fails on cut connections: the error
    names the cut connection's cause (as the SDK path does), not the earlier refusal."""
    err = arun(cut_after_refusal(path))
    assert type(err) is PolicyServerError
    assert "Connection" in str(err) or "Timeout" in str(err), err
    assert "maximum context length" not in str(err), err


@pytest.mark.parametrize("kind", ["gzip", "redirect"])
def test_the_lean_path_asked_for_by_name_keeps_to_itself(kind: str) -> None:
    """``request_path="lean"`` is not ``"auto"``: an answer only the SDK reads is a bad
    answer there, retried and then a server error, never a switch to the SDK."""
    lean = arun(outcome(kind, "lean"))
    assert lean[0] == "PolicyServerError" and "lean client does not follow" in lean[1], lean
    assert lean[-1] == ["/v1/completions"] * RETRY.max_attempts
