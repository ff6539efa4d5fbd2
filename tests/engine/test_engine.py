"""Token-in/token-out proven on a real vLLM engine (``make test-engine``).

- ``vllm:`` multi-turn ledger episodes: every turn's prompt ids extend the previous prompt
  + completion exactly, and the TRL export refuses nothing;
- ``openai:`` on the same server: the server re-renders the transcript, the mismatches are
  detected, and those episodes are refused, never exported;
- the recorded logprobs equal the model's own log-softmax (same weights, run here);
- three TRL GRPO steps fed by ``GymforgeRollout`` against the server.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout import LocalExecutor, RunSpec
from gymforge.rollout.resolve import resolve_policy
from gymforge.rollout.runner import RunResult, run
from gymforge.trajectory.export import export
from gymforge.trajectory.io import read_episodes

TASKS = LedgerEnv.tasks.sample(12, 11, "train")
# A little above 1 so that sampled token sequences are often not the canonical tokenisation
# of their text, as they are for real models: what makes a re-rendered chat prompt drift.
EXPLORE = 1.3


def play(
    spec: str, base_url: str, out: Path, tasks: list[str] = TASKS, temperature: float = EXPLORE
) -> RunResult:
    source = resolve_policy(spec, base_url, max_tokens=48, temperature=temperature)

    async def go() -> RunResult:
        try:
            return await run(
                RunSpec(
                    env="ledger",
                    policy=source.spec,
                    jobs=[(t, 0) for t in tasks],
                    out=out,
                    concurrency=2,
                ),
                LocalExecutor(LedgerEnv, source.factory),
            )
        finally:
            if source.close is not None:
                await source.close()

    return asyncio.run(go())


def turns_by_episode(path: Path) -> dict[str, list[dict[str, Any]]]:
    return {
        log.episode_id: [s.policy.model_dump() for s in log.steps[1:] if s.policy is not None]
        for log in read_episodes(path)
    }


def breaks(turns: list[dict[str, Any]]) -> int:
    """Turn pairs whose next prompt does not extend the last prompt + completion."""
    bad = 0
    for prev, nxt in itertools.pairwise(turns):
        full = prev["prompt_token_ids"] + prev["completion_token_ids"]
        bad += nxt["prompt_token_ids"][: len(full)] != full
    return bad


def test_vllm_policy_prompts_extend_exactly(
    engine: Any, figure: Callable[[str, Any], None], tmp_path: Path
) -> None:
    result = play("vllm:tiny", engine.base_url, tmp_path)
    assert not result.errors
    episodes = turns_by_episode(tmp_path / "trajectories.jsonl")
    pairs = sum(len(t) - 1 for t in episodes.values())
    broken = sum(breaks(t) for t in episodes.values())
    multi = sum(len(t) >= 2 for t in episodes.values())
    assert len(episodes) == len(TASKS) and multi >= len(TASKS) // 2 and pairs >= len(TASKS)
    assert {t["capture_level"] for ts in episodes.values() for t in ts} == {"tokens"}
    report = export(tmp_path / "trajectories.jsonl", "trl", tmp_path / "trl.jsonl")
    figure(
        "vllm: prefix extensions held",
        f"{pairs - broken}/{pairs} turn pairs, {len(episodes)} episodes ({multi} multi-turn)",
    )
    figure("vllm: TRL export", f"written {report.written}, refused {dict(report.refused)}")
    assert broken == 0
    assert report.written == len(TASKS) and not report.refused


def test_openai_policy_mismatches_are_detected_and_refused(
    engine: Any, figure: Callable[[str, Any], None], tmp_path: Path
) -> None:
    result = play("openai:tiny", engine.base_url, tmp_path)
    assert not result.errors
    episodes = turns_by_episode(tmp_path / "trajectories.jsonl")
    pairs = sum(len(t) - 1 for t in episodes.values())
    broken_pairs = sum(breaks(t) for t in episodes.values())
    mismatched = {e for e, t in episodes.items() if breaks(t)}
    report = export(tmp_path / "trajectories.jsonl", "trl", tmp_path / "trl.jsonl")
    exported = {
        json.loads(line)["episode_id"] for line in (tmp_path / "trl.jsonl").read_text().splitlines()
    }
    figure(
        "openai: prefix extensions held",
        f"{pairs - broken_pairs}/{pairs} turn pairs; {len(mismatched)}/{len(episodes)} "
        "episodes re-tokenised",
    )
    figure("openai: TRL export", f"written {report.written}, refused {dict(report.refused)}")
    assert mismatched, "the chat path re-rendered every prompt exactly: nothing to detect"
    assert report.refused.get("prefix_mismatch") == len(mismatched)
    assert not exported & mismatched


def test_logprobs_equal_the_models_log_softmax(
    engine: Any, figure: Callable[[str, Any], None], model_dir: Path, tmp_path: Path
) -> None:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    result = play("vllm:tiny", engine.base_url, tmp_path, TASKS[:4], temperature=1.0)
    assert not result.errors
    # float32 like the served model; eager attention is the plain softmax(QK^T)V the
    # reference needs (sdpa's fused kernel adds its own float32 rounding, ~1e-5 at 1k tokens)
    model = transformers.AutoModelForCausalLM.from_pretrained(
        model_dir, dtype=torch.float32, attn_implementation="eager"
    )
    model.eval()
    worst, tokens = 0.0, 0
    with torch.no_grad():
        for turns in turns_by_episode(tmp_path / "trajectories.jsonl").values():
            for t in turns:
                prompt, completion = t["prompt_token_ids"], t["completion_token_ids"]
                logits = model(torch.tensor([prompt + completion])).logits[0]
                logsm = torch.log_softmax(logits[len(prompt) - 1 : -1].double(), dim=-1)
                mine = logsm[torch.arange(len(completion)), torch.tensor(completion)]
                recorded = torch.tensor(t["logprobs"], dtype=torch.float64)
                worst = max(worst, float((mine - recorded).abs().max()))
                tokens += len(completion)
    figure("max |logprob - model log-softmax|", f"{worst:.2e} over {tokens} tokens")
    assert tokens > 100 and worst < 1e-5


def test_grpo_three_steps_fed_by_gymforge_rollout(
    engine: Any, figure: Callable[[str, Any], None], model_dir: Path, tmp_path: Path
) -> None:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    trl = pytest.importorskip("trl")
    from gymforge.integrations.trl import GymforgeRollout, reward_funcs, task_dataset

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    torch.set_num_threads(1)
    train = task_dataset(LedgerEnv, 6, split="train", seed=3)
    tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir)
    model = transformers.AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    rollout = GymforgeRollout(
        LedgerEnv,
        train,
        base_url=engine.base_url,
        model="tiny",
        max_tokens=48,
        trajectory_dir=tmp_path / "rollouts",
        concurrency=4,
    )
    args = trl.GRPOConfig(
        output_dir=str(tmp_path / "out"),
        use_cpu=True,
        report_to="none",
        max_steps=3,
        per_device_train_batch_size=4,
        num_generations=4,
        max_completion_length=2048,
        learning_rate=1e-4,
        beta=0.0,
        logging_steps=1,
        save_strategy="no",
        disable_tqdm=True,
        seed=0,
    )
    trainer = trl.GRPOTrainer(
        model=model,
        reward_funcs=reward_funcs(LedgerEnv),
        args=args,
        train_dataset=train,
        processing_class=tokenizer,
        rollout_func=rollout,
    )
    trainer.train()
    rollout.close()
    steps = [h for h in trainer.state.log_history if "loss" in h]
    losses = [round(float(h["loss"]), 4) for h in steps]
    refused = [h.get("gymforge/refused") for h in steps]
    figure(
        "GRPO via GymforgeRollout",
        f"{len(steps)} steps, {rollout.calls} rollout calls ({rollout.calls * 4} episodes), "
        f"losses {losses}, refused per step {refused}, refused total {dict(rollout.refused)}",
    )
    assert len(steps) == 3 and all(math.isfinite(x) for x in losses)
    assert rollout.calls == 3 and not rollout.refused
    assert all(h.get("gymforge/refused") == 0.0 for h in steps)
    versions = {
        s.policy.weight_version
        for p in sorted((tmp_path / "rollouts").glob("call_*/trajectories.jsonl"))
        for log in read_episodes(p)
        for s in log.steps
        if s.policy is not None
    }
    assert versions == {"0", "1", "2"}  # the trainer's step when each request was sent
