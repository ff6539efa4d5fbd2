"""The token-in ``vllm:`` policy against the local server's vLLM-shaped token-id paths."""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai_helpers import FAST_RETRY, arun, ledger_oracle_responder

from gymforge.core.errors import UserError
from gymforge.core.policy import episode_context
from gymforge.core.types import Invalid, Message, Observation, Reply, ToolCall
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout import LocalExecutor, RunSpec
from gymforge.rollout.resolve import resolve_policy
from gymforge.rollout.runner import run
from gymforge.rollout.server import Sampling
from gymforge.rollout.vllm_policy import TokenInUnsupported, VLLMPolicyFactory
from gymforge.testing import (
    EOS,
    OpenAITestServer,
    ServedReply,
    ServedToolCall,
    fake_tokenize,
    render_prompt,
    scripted_responder,
)
from gymforge.trajectory.export import export
from gymforge.trajectory.io import read_episodes

TASKS = LedgerEnv.tasks.sample(4, 5, "train", difficulties=[1])
TOOLS = ({"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}},)
RESET = Observation(
    messages=(Message(role="system", content="Be brief."), Message(role="user", content="Hi")),
    tools=TOOLS,
)


def factory(srv: OpenAITestServer, **options: Any) -> VLLMPolicyFactory:
    options.setdefault("retry", FAST_RETRY)
    return VLLMPolicyFactory("m", base_url=srv.base_url, **options)


def play_ledger(srv: OpenAITestServer, out: Path, **options: Any) -> Any:
    made = factory(srv, **options)

    async def go() -> Any:
        try:
            return await run(
                RunSpec(
                    env="ledger",
                    policy="vllm",
                    jobs=[(t, 0) for t in TASKS],
                    out=out,
                    concurrency=2,
                ),
                LocalExecutor(LedgerEnv, made),
            )
        finally:
            await made.aclose()

    return arun(go(), 60)


def turns_of(path: Path) -> list[list[dict[str, Any]]]:
    return [
        [s.policy.model_dump() for s in log.steps[1:] if s.policy is not None]
        for log in read_episodes(path)
    ]


def test_multi_turn_prompts_extend_the_last_prompt_and_completion_exactly(tmp_path: Path) -> None:
    with OpenAITestServer(ledger_oracle_responder(TASKS)) as srv:
        result = play_ledger(srv, tmp_path, weight_version="3")
        requests = [r for r in srv.requests if "prompt" in r]
    assert not result.errors and all(e["success"] for e in result.episodes)
    episodes = turns_of(tmp_path / "trajectories.jsonl")
    assert len(episodes) == len(TASKS) and all(len(t) >= 4 for t in episodes)
    for turns in episodes:
        for prev, nxt in itertools.pairwise(turns):
            full = prev["prompt_token_ids"] + prev["completion_token_ids"]
            assert nxt["prompt_token_ids"][: len(full)] == full
        assert {t["capture_level"] for t in turns} == {"tokens"}
        assert {t["weight_version"] for t in turns} == {"3"}
        first = turns[0]["prompt_token_ids"]
        assert bytes(first).decode().endswith("<|assistant|>")  # the generation prompt
        # completions end with the EOS the server generated; the close adds only "\n"
        assert bytes(turns[0]["completion_token_ids"]).decode().endswith(EOS)
    assert all(isinstance(r["prompt"], list) for r in requests)  # token-in, never text
    assert all(r["return_token_ids"] and r["include_stop_str_in_output"] for r in requests)
    report = export(tmp_path / "trajectories.jsonl", "trl", tmp_path / "trl.jsonl")
    assert report.written == len(TASKS) and not report.refused


def test_delta_is_what_the_template_adds_after_an_assistant_turn() -> None:
    """Turn 2's prompt spells the whole conversation as the template renders it."""
    replies = [ServedReply(tool_calls=(ServedToolCall("f", {"x": 1}),)), "done"]
    with OpenAITestServer(scripted_responder(replies)) as srv:
        made = factory(srv)

        async def go() -> list[Any]:
            policy = made()
            await policy.start(episode_context(policy, LedgerEnv(), "t/v1/d1/s1", 0))
            one = await policy.act(RESET)
            tool = Message(role="tool", content='{"ok": true}', tool_call_id="call_1")
            two = await policy.act(Observation(messages=(tool,)))
            await made.aclose()
            return [one, two]

        one, two = arun(go())
    assert isinstance(one.action, ToolCall) and one.action.arguments == {"x": 1}
    assert isinstance(two.action, Reply) and two.action.text == "done"
    call_text = '<tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>'
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": call_text},
        {"role": "tool", "content": '{"ok": true}', "tool_call_id": "call_1"},
    ]
    # the model's EOS (<|end|>) ends its turn; the template's close adds only the "\n"
    assert two.prompt_token_ids == fake_tokenize(render_prompt(messages, list(TOOLS)))


def test_stop_string_stays_in_the_token_sequence() -> None:
    replies = [ServedReply(content="thinking<tool_call>{}</tool_call> then more"), "done"]
    with OpenAITestServer(scripted_responder(replies)) as srv:
        made = factory(srv, sampling=Sampling(stop=("</tool_call>",)))

        async def go() -> list[Any]:
            policy = made()
            await policy.start(episode_context(policy, LedgerEnv(), "t/v1/d1/s1", 0))
            one = await policy.act(RESET)
            two = await policy.act(Observation(messages=(Message(role="user", content="go"),)))
            await made.aclose()
            return [one, two]

        one, two = arun(go())
        request = srv.requests[-1]
    assert request["stop"] == ["</tool_call>"] and request["include_stop_str_in_output"]
    assert one.text == "thinking<tool_call>{}</tool_call>" and one.finish_reason == "stop"
    assert one.completion_token_ids == fake_tokenize(one.text)
    full = one.prompt_token_ids + one.completion_token_ids
    assert two.prompt_token_ids[: len(full)] == full


def test_malformed_calls_take_the_envs_malformed_path(tmp_path: Path) -> None:
    with OpenAITestServer(ledger_oracle_responder(TASKS)) as srv:
        srv.inject("malformed")
        result = play_ledger(srv, tmp_path)
    assert not result.errors
    logs = read_episodes(tmp_path / "trajectories.jsonl")
    invalid = [s for log in logs for s in log.steps if isinstance(s.action, Invalid)]
    assert len(invalid) == 1 and invalid[0].info.get("malformed")
    assert "not valid JSON" in invalid[0].action.error


def test_context_length_ends_the_episode_as_truncated(tmp_path: Path) -> None:
    with OpenAITestServer(ledger_oracle_responder(TASKS), max_context=1400) as srv:
        result = play_ledger(srv, tmp_path)
    assert not result.errors
    assert {e["truncated"] for e in result.episodes} == {True}
    assert {e["failure_reason"] for e in result.episodes} == {"context_length"}


@pytest.mark.parametrize("local", [False, True], ids=["server-template", "local-tokenizer"])
def test_a_plain_server_is_detected_at_the_first_request(
    tmp_path: Path, local: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    with OpenAITestServer(token_in=False) as srv:
        made = factory(srv)
        if local:  # a local template that renders like the server's
            made.template.renderer = FakeLocal()

        async def go() -> None:
            policy = made()
            await policy.start(episode_context(policy, LedgerEnv(), "t/v1/d1/s1", 0))
            try:
                await policy.act(RESET)
            finally:
                await made.aclose()

        with pytest.raises(TokenInUnsupported, match="openai:MODEL") as info:
            arun(go())
        asked = len(srv.requests) + sum(v for k, v in srv.served.items() if k != "ok")
    assert not info.value.retryable and asked <= 2
    assert ("/tokenize" in str(info.value)) != local


class FakeLocal:
    """A local renderer with the test server's template (what --tokenizer would load)."""

    async def chat_ids(self, messages: Any, tools: Any, generation: bool) -> list[int]:
        return fake_tokenize(render_prompt(messages, tools.tools, generation))

    async def text_ids(self, text: str) -> list[int]:
        return fake_tokenize(text)

    async def text(self, ids: list[int]) -> str:
        return bytes(ids).decode()


def test_a_plain_server_stops_the_run_with_one_error(tmp_path: Path) -> None:
    with OpenAITestServer(token_in=False) as srv:
        with pytest.raises(UserError, match=r"has no /tokenize.*openai:MODEL") as info:
            play_ledger(srv, tmp_path)
        served = dict(srv.served)
    assert "\n" not in str(info.value)
    assert served.get("ok", 0) == 0  # not one completion was asked for


def test_an_unloadable_tokenizer_is_a_one_line_error_before_any_episode(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    bad = tmp_path / "not-a-tokenizer"
    bad.mkdir()
    (bad / "tokenizer_config.json").write_text("{not json")
    for path in (str(bad), str(tmp_path / "missing")):
        with pytest.raises(UserError, match="cannot load tokenizer") as info:
            resolve_policy("vllm:m", "http://127.0.0.1:9/v1", tokenizer=path)
        assert "\n" not in str(info.value)


def test_spec_and_settings() -> None:
    source = resolve_policy("vllm:org/model:v2", "http://127.0.0.1:9/v1", max_tokens="32")
    made = source.factory
    assert isinstance(made, VLLMPolicyFactory) and made.model == "org/model:v2"
    assert made.sampling.max_tokens == 32

    async def root() -> str:
        return made.root_url

    assert arun(root()) == "http://127.0.0.1:9"
    with pytest.raises(UserError, match="tool format"):
        resolve_policy("vllm:m", tool_format="xml")
    with pytest.raises(UserError, match="only apply to vllm"):
        resolve_policy("openai:m", tokenizer="x")


def test_records_keep_the_tools_as_the_env_gave_them(tmp_path: Path) -> None:
    """The first prompt re-renders from the record alone: tools in the env's order, keys in
    the env's order (templates render ``tool | tojson`` in insertion order)."""
    with OpenAITestServer(ledger_oracle_responder(TASKS[:1])) as srv:
        made = factory(srv)

        async def go() -> Any:
            try:
                return await run(
                    RunSpec(env="ledger", policy="vllm", jobs=[(TASKS[0], 0)], out=tmp_path),
                    LocalExecutor(LedgerEnv, made),
                )
            finally:
                await made.aclose()

        arun(go())
    log = read_episodes(tmp_path / "trajectories.jsonl")[0]
    reset, first = log.steps[0].observation, log.steps[1].policy
    assert first is not None
    env_tools = [dict(t) for t in arun(LedgerEnv().reset(TASKS[0], 0)).tools]
    tools = reset.tool_specs()
    assert json.dumps(tools) == json.dumps(env_tools)  # same order, keys included
    assert json.dumps(reset.tools) != json.dumps(env_tools)  # the canonical copy sorts keys
    messages = [{"role": m.role, "content": m.content} for m in reset.rendered]
    assert fake_tokenize(render_prompt(messages, tools)) == first.prompt_token_ids


def test_factory_pickles_for_ray_after_use() -> None:
    import pickle

    with OpenAITestServer(scripted_responder(["ok"])) as srv:
        made = factory(srv, weight_version="4")

        async def go() -> Any:
            policy = made()
            await policy.start(episode_context(policy, LedgerEnv(), "t/v1/d1/s1", 0))
            turn = await policy.act(RESET)
            copy = pickle.loads(pickle.dumps(made))
            again = copy()
            await again.start(episode_context(again, LedgerEnv(), "t/v1/d1/s1", 0))
            turn2 = await again.act(RESET)
            await copy.aclose()
            await made.aclose()
            return turn, turn2

        one, two = arun(go())
    assert one.prompt_token_ids == two.prompt_token_ids and two.weight_version == "4"


@pytest.mark.parametrize(
    ("fmt", "text"),
    [
        ("llama3_json", '{"name": "find_customer", "parameters": {"name": "Ada"}}'),
        (
            "hermes",
            '<tool_call>{"name": "find_customer", "arguments": {"name": "Ada"}}</tool_call>',
        ),
    ],
)
def test_replay_parses_the_text_in_the_recorded_tool_format(fmt: Any, text: str) -> None:
    """Replay checks each recorded action against the recorded text, parsed the way the
    token-in policy parsed it: a llama3-style call is not mistaken for a reply."""
    from gymforge.core.seeding import canonical_json
    from gymforge.rollout.replay import policy_parse
    from gymforge.rollout.tool_formats import parse_completion

    action = json.loads(canonical_json(parse_completion(text, fmt, "call_1").model_dump()))
    assert action["name"] == "find_customer"
    policy = {"capture_level": "tokens", "text": text, "tool_format": fmt}
    assert policy_parse(policy, action) is None
    edited = {**policy, "text": text.replace("Ada", "Bob")}
    assert policy_parse(edited, action) is not None


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789,", max_size=20), st.lists(st.integers(-(2**70), 2**70)))
def test_prompt_ids_are_written_as_str_writes_them(items: str, ids: list[int]) -> None:
    """The growing prompt's JSON items: orjson's digits where it writes them, ``str``'s
    past 64 bits, the same text either way."""
    from gymforge.rollout.vllm_policy import _extend_json

    more = ",".join(map(str, ids))
    want = items if not ids else (f"{items},{more}" if items else more)
    assert _extend_json(items.encode(), ids) == want.encode()


@pytest.mark.parametrize("failures", [0, 1, 9])
def test_concurrent_first_turns_all_wait_for_the_models_context_length(failures: int) -> None:
    """With a local template (no ``/tokenize`` to state it) and no ``--max-tokens``, a turn's
    only bound is the context length ``/v1/models`` lists. Every first turn of a run starts at
    once: each waits for one request (not one per turn, and not the first turn alone getting
    the answer while the others have no bound); a failure is retried as any request is; a
    server still failing after every attempt leaves those turns without a bound (refused with
    a clear error), and a later turn asks again."""
    with OpenAITestServer(max_context=4096) as srv:
        made = factory(srv)
        made.template.renderer = FakeLocal()
        srv.models_failures = failures

        async def turn(i: int) -> Any:
            policy = made()
            await policy.start(episode_context(policy, LedgerEnv(), "t/v1/d1/s1", i))
            return await policy.act(RESET)

        async def go() -> list[Any]:
            try:
                first = await asyncio.gather(*(turn(i) for i in range(8)), return_exceptions=True)
                srv.models_failures = 0
                return [*first, await turn(8)]
            finally:
                await made.aclose()

        turns = arun(go())
        asked = sum(n for (path, _), n in srv.hosts.items() if path == "/v1/models")
    attempts = FAST_RETRY.max_attempts
    failed = failures >= attempts
    refused = [t for t in turns if isinstance(t, BaseException)]
    assert len(refused) == (8 if failed else 0) and made.context_window == 4096
    assert all("no bound for max_tokens" in str(t) for t in refused)
    assert asked == (attempts + 1 if failed else failures + 1)
