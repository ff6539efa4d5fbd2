"""Attack: write what the policy's own server refuses to read, and end the run.

In a multi-turn episode every request to the policy's server holds the agent's earlier
output: its replies, its tool calls' arguments, the tool results that echo them. A server
with a moderation or content policy in front of it (a hosted API, a gateway's guardrail
before vLLM) answers a request whose text it will not read with a 400 (OpenAI's
``content_policy_violation``, Azure's ``content_filter``, a guardrail in any wording), which
the server policies read as a configuration mistake: ``PolicyRequestRejected``, not
retryable, so the whole run stopped (exit 2, "the policy's requests are refused") with the
failing episode and every one not yet played unscored. A policy failing a task could end
the run (in a trainer, the batch) by writing something the moderation trips on. Success of
the attack would be the run stopped or any episode missing from the summary.

Here the model's first turn of the tasks it fails searches for a name the moderation
refuses; every later request of those episodes holds it (the tool call, the tool result
echoing it) and is refused. The defence: after the agent acted, a refusal that is not a
full context is asked again as the episode's first prompt alone (the reset observation,
none of the agent's text) for one token; answered, the refusal was the agent's text's doing
and the episode ends truncated, a counted failure (``transcript_refused``). A server that
refuses that request too (a wrong model name, a revoked key) is the configuration's
mistake and still stops the run, with a message saying so, as does a request refused
before the agent acted; a one-token request the server fails (a 5xx) leaves the episode to a
retry, never counted. Both server policies (``openai:`` on each request path, the token-in
``vllm:``, whose ``/tokenize`` renderings of the tool results a guardrail may refuse too) are
attacked.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from moderation import REFUSALS, TRIGGER

from gymforge.core.errors import POLICY_STOP_REASONS, TRANSCRIPT_REFUSED, UserError
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout import LocalExecutor, RunSpec, run
from gymforge.rollout.openai_policy import OpenAIPolicyFactory, Retry
from gymforge.rollout.server import ServerFactory
from gymforge.rollout.vllm_policy import VLLMPolicyFactory
from gymforge.testing import OpenAITestServer
from gymforge.testing.openai_server import (
    ServedError,
    ServedReply,
    ServedToolCall,
    fake_detokenize,
)
from gymforge.trajectory.reader import read_episodes, verify_chain

TASKS = LedgerEnv.tasks.sample(4, 14)
FAILED = TASKS[:2]
"""The tasks the policy would fail: the ones it writes ``TRIGGER`` on."""
RETRY = Retry(max_attempts=2, call_timeout=10.0, base_delay=0.01, max_delay=0.01)


def prompts(task_ids: Sequence[str]) -> list[str]:
    """The reset prompts of ``task_ids`` (seed 0), as JSON string bodies: how they read in a
    request's messages, dumped."""

    async def read() -> list[str]:
        env = LedgerEnv()
        try:
            found = []
            for task_id in task_ids:
                obs = await env.reset(task_id, 0)
                found.append(json.dumps(str(obs.messages[-1].content))[1:-1])
            return found
        finally:
            await env.close()

    return asyncio.run(read())


def moderated(
    kind: str, failing: Sequence[str], refuse: Callable[[dict[str, Any]], bool] | None = None
) -> Callable[[dict[str, Any]], ServedReply | str]:
    """The model behind ``kind``'s moderation: a request with ``TRIGGER`` in its messages
    (or one ``refuse`` picks) is refused; else the first turn searches customers (for
    ``TRIGGER`` on a task whose prompt is in ``failing``) and the next one answers."""
    message, code = REFUSALS[kind]

    def respond(request: dict[str, Any]) -> ServedReply | str:
        messages = request.get("messages") or []
        text = json.dumps(messages, ensure_ascii=False)
        if TRIGGER in text or (refuse is not None and refuse(request)):
            raise ServedError(400, message, code)
        if any(m.get("role") == "assistant" for m in messages):
            return "done"
        name = TRIGGER if any(p in text for p in failing) else "x"
        return ServedReply(tool_calls=(ServedToolCall("search_customers", {"name": name}),))

    return respond


def play(
    tmp_path: Path, factory: ServerFactory, tasks: Sequence[str], policy: str = "openai:m"
) -> Any:
    spec = RunSpec(
        env="ledger",
        policy=policy,
        jobs=[(t, 0) for t in tasks],  # in this order: the failed tasks are played first
        out=tmp_path,
        concurrency=1,
        max_retries=0,
    )
    executor = LocalExecutor(LedgerEnv, factory, close_policy=factory.aclose)
    return asyncio.run(run(spec, executor))


def assert_counted(out: Path, result: Any, reason: str = TRANSCRIPT_REFUSED) -> None:
    """Every task scored; the failed ones truncated after one step, ``reason``, in a file
    whose every episode passes the reader's checks."""
    for log in read_episodes(out / "trajectories.jsonl"):
        verify_chain(log)
    assert not result.errors, result.errors
    assert result.summary["episodes"] == len(TASKS)
    by_task = {e["task_id"]: e for e in result.episodes}
    assert sorted(by_task) == sorted(TASKS)
    for task_id, episode in by_task.items():
        if task_id in FAILED:
            assert episode["steps"] == 1 and episode["truncated"] and not episode["success"]
            assert episode["failure_reason"] == reason
        else:
            assert episode["steps"] == 2 and episode["failure_reason"] != reason


def probes(srv: OpenAITestServer) -> list[dict[str, Any]]:
    return [r for r in srv.requests if r.get("max_tokens") == 1]


def test_the_reason_is_a_policy_stop() -> None:
    assert TRANSCRIPT_REFUSED in POLICY_STOP_REASONS  # truncated without a terminal step


@pytest.mark.parametrize("kind", sorted(REFUSALS))
@pytest.mark.parametrize("path", ["lean", "fast", "typed"])
def test_a_refused_transcript_is_a_counted_failure(tmp_path: Path, kind: str, path: str) -> None:
    with OpenAITestServer(moderated(kind, prompts(FAILED))) as srv:
        factory = OpenAIPolicyFactory("m", base_url=srv.base_url, retry=RETRY, request_path=path)  # type: ignore[arg-type]
        result = play(tmp_path, factory, TASKS)
        sent = probes(srv)
    assert_counted(tmp_path, result)
    assert len(sent) == len(FAILED)  # one first-prompt request per refused episode
    for probe in sent:  # the episode's first prompt: none of the agent's text
        assert [m["role"] for m in probe["messages"]] == ["system", "user"]
        assert probe["tools"]


@pytest.mark.parametrize(
    ("kind", "path"),
    [("openai", "lean"), ("gateway", "lean"), ("azure", "lean"), ("azure", "fast")],
)
def test_a_refused_token_in_transcript_is_a_counted_failure(
    tmp_path: Path, kind: str, path: str
) -> None:
    # Azure's wording names the prompt: the policy's hint (token-id prompts refused?) is
    # added, and the refusal raised as TokenInUnsupported; it is judged all the same
    with OpenAITestServer(moderated(kind, prompts(FAILED))) as srv:
        factory = VLLMPolicyFactory("m", base_url=srv.base_url, retry=RETRY, request_path=path)  # type: ignore[arg-type]
        result = play(tmp_path, factory, TASKS, policy="vllm:m")
        sent, firsts = probes(srv), [r["prompt"] for r in srv.requests[:1]]
    assert_counted(tmp_path, result)
    assert len(sent) == len(FAILED)
    assert sent[0]["prompt"] == firsts[0]  # the first episode's first request, as it was
    assert all(TRIGGER not in fake_detokenize(p["prompt"]) for p in sent)


class ModeratedTokenize(OpenAITestServer):
    """A guardrail in front of every endpoint of a vLLM server, ``/tokenize`` too: the token-in
    policy renders the environment's new messages (the tool results) there before it asks
    for the completion."""

    async def _tokenize(self, request: web.Request) -> web.Response:
        if TRIGGER.encode() in await request.read():  # aiohttp keeps the body for the next read
            message, code = REFUSALS["gateway"]
            error = {"message": message, "type": "BadRequestError", "code": code}
            return web.json_response({"error": error}, status=400)
        return await super()._tokenize(request)


def test_a_refused_rendering_of_a_tool_result_is_a_counted_failure(tmp_path: Path) -> None:
    failing = prompts(FAILED)

    def respond(request: dict[str, Any]) -> ServedReply | str:
        messages = request.get("messages") or []
        if any(m.get("role") == "assistant" for m in messages):
            return "done"
        # a tool of the agent's naming: the environment's error echoes the name
        text = json.dumps(messages, ensure_ascii=False)
        name = TRIGGER if any(p in text for p in failing) else "search_customers"
        return ServedReply(tool_calls=(ServedToolCall(name, {"name": "x"}),))

    with ModeratedTokenize(respond) as srv:
        factory = VLLMPolicyFactory("m", base_url=srv.base_url, retry=RETRY)
        result = play(tmp_path, factory, TASKS, policy="vllm:m")
        sent = probes(srv)
    assert_counted(tmp_path, result)
    assert len(sent) == len(FAILED)


def test_a_server_that_refuses_every_request_still_stops_the_run(tmp_path: Path) -> None:
    # a wrong model name: the first request holds no agent text, nothing is counted
    with OpenAITestServer(moderated("openai", [], refuse=lambda _r: True)) as srv:
        factory = OpenAIPolicyFactory("m", base_url=srv.base_url, retry=RETRY)
        with pytest.raises(UserError, match=r"requests are refused.*safety system"):
            play(tmp_path, factory, TASKS)
        assert not probes(srv)
    assert not list(read_episodes(tmp_path / "trajectories.jsonl"))


@pytest.mark.parametrize("policy", ["openai:m", "vllm:m"])
def test_a_first_prompt_refused_too_stops_the_run(tmp_path: Path, policy: str) -> None:
    # the agent's text is refused, and so is the episode's first prompt asked again (a key
    # blocked after a violation: every request refused from then on, whatever its bound):
    # the configuration's mistake, not the agent's failure
    blocked: list[bool] = []
    model = moderated("gateway", prompts(FAILED), refuse=lambda _r: bool(blocked))

    def respond(request: dict[str, Any]) -> ServedReply | str:
        try:
            return model(request)
        except ServedError:
            blocked.append(True)
            raise

    with OpenAITestServer(respond) as srv:
        made = OpenAIPolicyFactory if policy == "openai:m" else VLLMPolicyFactory
        factory = made("m", base_url=srv.base_url, retry=RETRY)
        with pytest.raises(UserError, match=r"without the agent's text too.*guardrail"):
            play(tmp_path, factory, TASKS, policy=policy)
        assert len(probes(srv)) == 1
    assert not list(read_episodes(tmp_path / "trajectories.jsonl"))


def test_a_first_prompt_the_server_fails_is_retried_not_counted(tmp_path: Path) -> None:
    # the server fails the one-token request (503, after the retries): no evidence either
    # way, so the refused episodes are left to a retry (infrastructure), never counted, and
    # the run goes on
    moderation = moderated("openai", prompts(FAILED))

    def respond(request: dict[str, Any]) -> ServedReply | str:
        if request.get("max_tokens") == 1:
            raise ServedError(503, "the server is overloaded")
        return moderation(request)

    # each failed task followed by one played (two infrastructure failures in a row, with no
    # episode finishing between them, stop a run: not what is tested here)
    interleaved = [FAILED[0], TASKS[2], FAILED[1], TASKS[3]]
    with OpenAITestServer(respond) as srv:
        factory = OpenAIPolicyFactory("m", base_url=srv.base_url, retry=RETRY)
        result = play(tmp_path, factory, interleaved)
    assert sorted(e["task_id"] for e in result.episodes) == sorted(TASKS[2:])
    assert len(result.errors) == len(FAILED)
    assert all("503" in e for e in result.errors)
