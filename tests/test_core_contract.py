"""The core contract: EnvSpec, StepResult, episode state errors, snapshots, seeding, tokens."""

from __future__ import annotations

import asyncio
import json
import math
import os
import subprocess
import sys

import pytest

from gymforge.core import (
    ApproxTokenCounter,
    Environment,
    EnvSpec,
    EpisodeStateError,
    Message,
    Observation,
    Reply,
    StepResult,
    ToolCall,
    canonical_json,
    derive_seed,
    fingerprint,
    rng,
    stable_hash,
)
from gymforge.envs.ledger import LedgerEnv
from gymforge.integrations.hf_tokens import HFTokenCounter

TASK = "ledger.transfer/v1/d1/s251756608"
OBS = Observation(messages=(Message(role="user", content="hi"),))


# ---- EnvSpec -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "version", ["0.0.0", "1.0.0", "10.20.30", "1.0.0-alpha.1", "1.0.0+build.5", "2.1.3-rc-1"]
)
def test_envspec_accepts_semver(version: str) -> None:
    assert EnvSpec("x", version).version == version


@pytest.mark.parametrize(
    "version", ["", "1", "1.0", "v1.0.0", "1.0.0.0", "a.b.c", "1.0.0-", "1.0.0 ", " 1.0.0", "1.x.0"]
)
def test_envspec_rejects_non_semver(version: str) -> None:
    with pytest.raises(ValueError, match="semver"):
        EnvSpec("x", version)


def test_envspec_rejects_trailing_newline() -> None:
    with pytest.raises(ValueError, match="semver"):
        EnvSpec("x", "1.0.0\n")


def test_envspec_rejects_leading_zeros() -> None:
    with pytest.raises(ValueError, match="semver"):
        EnvSpec("x", "01.2.3")


def test_envspec_defaults_and_ledger_spec() -> None:
    spec = EnvSpec("x", "1.2.3")
    assert spec.renderer_version == "1"
    assert LedgerEnv.spec.id == "ledger"
    assert isinstance(LedgerEnv(), Environment)


# ---- StepResult --------------------------------------------------------------------------
def test_stepresult_make_sums_components() -> None:
    comps = {"task": 1.0, "step_cost": -0.01, "invalid_call": -0.1}
    r = StepResult.make(OBS, comps)
    assert r.reward == math.fsum(comps.values())
    assert r.reward_components == comps
    assert r.reward_components is not comps  # copied, not aliased
    assert not r.terminated and not r.truncated and not r.done
    assert r.info == {} and r.timing == {}


def test_stepresult_make_many_small_components_is_exact() -> None:
    comps = {f"c{i}": 0.1 for i in range(10)}
    r = StepResult.make(OBS, comps)
    assert r.reward == math.fsum(comps.values())


def test_stepresult_make_empty_components() -> None:
    assert StepResult.make(OBS, {}).reward == 0.0


def test_stepresult_rejects_reward_not_sum() -> None:
    with pytest.raises(ValueError, match="sum"):
        StepResult(OBS, 0.5, {"task": 1.0}, False, False)
    with pytest.raises(ValueError, match="sum"):
        StepResult(OBS, 0.0, {"a": 0.25, "b": 0.25}, False, False)


def test_stepresult_accepts_reward_equal_sum() -> None:
    r = StepResult(OBS, 0.5, {"a": 0.25, "b": 0.25}, True, False)
    assert r.done and r.terminated


def test_stepresult_rejects_terminated_and_truncated() -> None:
    with pytest.raises(ValueError, match="both"):
        StepResult(OBS, 0.0, {}, True, True)
    with pytest.raises(ValueError, match="both"):
        StepResult.make(OBS, {"task": 1.0}, terminated=True, truncated=True)


def test_stepresult_truncated_is_done() -> None:
    assert StepResult.make(OBS, {}, truncated=True).done


# ---- episode state -----------------------------------------------------------------------
def test_step_before_reset_raises(make_sync) -> None:
    env = make_sync()
    with pytest.raises(EpisodeStateError):
        env.step(Reply(text="hi"))


def test_snapshot_before_reset_raises(make_sync) -> None:
    env = make_sync()
    with pytest.raises(EpisodeStateError):
        env.snapshot()


def test_step_after_episode_end_raises(make_sync) -> None:
    env = make_sync()
    env.reset(TASK, 0)
    result = env.step(Reply(text="done"))
    assert result.terminated
    with pytest.raises(EpisodeStateError):
        env.step(Reply(text="again"))
    with pytest.raises(EpisodeStateError):
        env.step(ToolCall(name="search_customers", arguments={"name": "a"}))
    # a new reset makes the env usable again
    env.reset(TASK, 0)
    assert not env.step(ToolCall(name="search_customers", arguments={"name": "a"})).done


def test_step_after_truncation_raises(make_sync) -> None:
    env = make_sync()
    env.reset(TASK, 0)
    result = None
    for _ in range(LedgerEnv.budget.max_steps):
        result = env.step(ToolCall(name="search_customers", arguments={"name": "a"}))
    assert result is not None and result.truncated
    with pytest.raises(EpisodeStateError):
        env.step(Reply(text="late"))


def test_closed_env_refuses_reset_and_step(make_sync) -> None:
    env = make_sync()
    env.reset(TASK, 0)
    asyncio.run(env.env.close())
    with pytest.raises(EpisodeStateError):
        env.step(Reply(text="x"))
    with pytest.raises(EpisodeStateError):
        env.reset(TASK, 0)


def test_snapshot_is_json_serialisable(make_sync) -> None:
    env = make_sync()
    env.reset("ledger.transfer/v1/d3/s5", 1)
    snap = env.snapshot()
    assert isinstance(snap, dict)
    assert json.loads(json.dumps(snap)) == snap
    assert json.loads(canonical_json(snap)) == snap
    assert fingerprint(snap) == fingerprint(env.snapshot())
    # the snapshot is a copy: mutating it does not touch the world
    snap["customers"].clear()
    assert env.snapshot()["customers"]


# ---- seeding -----------------------------------------------------------------------------
KNOWN_DERIVE_SEED = 10580665482674227297  # derive_seed("a", 1, "s"), computed once
KNOWN_RNG_DRAW = 0.9181073339150841  # rng("t", 1, "s").random(), computed once


def test_derive_seed_known_value() -> None:
    assert derive_seed("a", 1, "s") == KNOWN_DERIVE_SEED
    assert 0 <= derive_seed("a", 1, "s") < 2**64


def test_rng_known_value_and_stable() -> None:
    assert rng("t", 1, "s").random() == KNOWN_RNG_DRAW
    a, b = rng("t", 1, "s"), rng("t", 1, "s")
    assert [a.random() for _ in range(20)] == [b.random() for _ in range(20)]


def test_streams_are_independent() -> None:
    assert derive_seed("t", 1, "world") != derive_seed("t", 1, "faults")
    assert derive_seed("t", 1, "s") != derive_seed("t", 2, "s")
    assert derive_seed("t", 1, "s") != derive_seed("u", 1, "s")
    # the encoding is unambiguous: ("a", "b") is not ("ab",) and 1 is not "1"
    assert derive_seed("a", "b") != derive_seed("ab")
    assert derive_seed(1) != derive_seed("1")


def test_stable_hash_is_sha256() -> None:
    assert len(stable_hash("x")) == 32


@pytest.mark.parametrize("hashseed", ["0", "12345"])
def test_derive_seed_stable_across_processes(hashseed: str) -> None:
    code = (
        "from gymforge.core import derive_seed, rng; "
        "print(derive_seed('a', 1, 's')); print(repr(rng('t', 1, 's').random()))"
    )
    env = {**os.environ, "PYTHONHASHSEED": hashseed}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    ).stdout.split()
    assert out == [str(KNOWN_DERIVE_SEED), repr(KNOWN_RNG_DRAW)]


def test_fingerprint_order_independent_for_dict_keys() -> None:
    a = {"a": 1, "b": {"x": [1, 2], "y": "z"}, "c": None}
    b = {"c": None, "b": {"y": "z", "x": [1, 2]}, "a": 1}
    assert list(a) != list(b)
    assert fingerprint(a) == fingerprint(b)
    fp = fingerprint(a)
    assert fp.startswith("sha256:") and len(fp) == len("sha256:") + 64
    int(fp.removeprefix("sha256:"), 16)


def test_fingerprint_sensitive_to_values_and_list_order() -> None:
    base = {"a": 1, "b": [1, 2]}
    assert fingerprint(base) != fingerprint({"a": 2, "b": [1, 2]})
    assert fingerprint(base) != fingerprint({"a": 1, "b": [2, 1]})
    assert fingerprint(base) != fingerprint({"a": 1, "b": [1, 2], "c": None})


def test_canonical_json_shape() -> None:
    assert canonical_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})


# ---- tokens ------------------------------------------------------------------------------
def test_approx_token_counter_rule() -> None:
    c = ApproxTokenCounter()
    assert c.name == "approx:utf8/4"
    assert c.exact is False
    assert c.count_text("") == 0
    assert c.count_text("abcd") == 1
    assert c.count_text("abcde") == 2
    assert c.count_text("é" * 2) == 1  # 4 UTF-8 bytes
    assert c.count_text("日本") == 2  # 6 UTF-8 bytes
    msgs = [Message(role="user", content="abcde"), Message(role="assistant", content="")]
    assert c.count(msgs) == (2 + 4) + (0 + 4)


def test_observations_default_to_approximate_tokens(make_sync) -> None:
    env = make_sync()
    obs = env.reset(TASK, 0)
    assert obs.tokenizer == "approx:utf8/4"
    assert obs.tokens_exact is False
    assert obs.tokens == ApproxTokenCounter().count(obs.messages) > 0
    step = env.step(ToolCall(name="search_customers", arguments={"name": "a"}))
    assert step.observation.tokens_exact is False
    assert step.observation.tokens == ApproxTokenCounter().count(step.observation.messages)


SENTENCES = [
    "You are a bank clerk.",
    "Make these transfers, each exactly once.",
    "Find customers by name and list their accounts.",
    "The quick brown fox jumps over the lazy dog.",
    '{"ok": true, "result": [{"customer_id": "C100", "name": "Ana Lopez"}]}',
]


@pytest.fixture(scope="module")
def tiny_tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["[UNK]"], show_progress=False)
    tok.train_from_iterator(SENTENCES * 4, trainer=trainer)
    return tok


def test_hf_token_counter_exact_counts(tiny_tokenizer) -> None:
    c = HFTokenCounter(tiny_tokenizer, name="tiny-bpe")
    assert c.exact is True
    assert c.name == "hf:tiny-bpe"
    for text in [*SENTENCES, "", "unseen wörds 12345 !!"]:
        assert c.count_text(text) == len(tiny_tokenizer.encode(text).ids)
    msgs = [Message(role="user", content=s) for s in SENTENCES]
    assert c.count(msgs) == sum(len(tiny_tokenizer.encode(s).ids) for s in SENTENCES)
    # not the approximation
    assert c.count(msgs) != ApproxTokenCounter().count(msgs)


def test_ledger_with_hf_counter_has_exact_tokens(tiny_tokenizer, make_sync) -> None:
    env = make_sync(token_counter=HFTokenCounter(tiny_tokenizer, name="tiny-bpe"))
    obs = env.reset(TASK, 0)
    assert obs.tokens_exact is True
    assert obs.tokenizer == "hf:tiny-bpe"
    assert obs.tokens == sum(len(tiny_tokenizer.encode(m.content).ids) for m in obs.messages)
    step = env.step(ToolCall(name="search_customers", arguments={"name": "a"}))
    o = step.observation
    assert o.tokens_exact is True and o.tokenizer == "hf:tiny-bpe"
    assert o.tokens == sum(len(tiny_tokenizer.encode(m.content).ids) for m in o.messages) > 0


class ChatTemplateTokenizer:
    """A stand-in for a transformers (v5) tokenizer with a chat template. Since transformers
    5.0, ``apply_chat_template(..., tokenize=True)`` returns a BatchEncoding (a dict of
    ``input_ids`` and ``attention_mask``) unless ``return_dict=False`` is passed
    (huggingface/transformers#41626, #42567)."""

    chat_template = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}"
    name_or_path = "stub/v5"

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return [len(w) for w in text.split()]

    def apply_chat_template(
        self, conversation: list[dict[str, str]], tokenize: bool = True, return_dict: bool = True
    ) -> object:
        ids: list[int] = []
        for m in conversation:
            ids += [0, *self.encode(m["content"])]  # one role token per message
        if return_dict:
            return {"input_ids": ids, "attention_mask": [1] * len(ids)}
        return ids


def test_hf_token_counter_with_chat_template_counts_ids() -> None:
    counter = HFTokenCounter(ChatTemplateTokenizer())
    assert counter.name == "hf:stub/v5"
    msgs = [
        Message(role="system", content="you are a clerk"),
        Message(role="user", content="make three transfers now please"),
    ]
    assert counter.count(msgs) == 2 + 4 + 5  # a role token per message, then one id per word
