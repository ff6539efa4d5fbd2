"""GRPO baseline: a tiny random-init model learns ``digits`` sums with TRL on CPU.

Everything is built on the spot, nothing is downloaded: a character-level tokenizer trained
in memory on the training prompts (each digit one token) and a 2-layer ``LlamaForCausalLM``
with random weights. TRL's ``GRPOTrainer`` trains it on ``digits`` difficulty 1 (sums with
a one-digit total, one-token answers) through gymforge's TRL adapters: the train split
exported by ``task_dataset`` (``TaskSource.sample(..., "train")``; held-out sums are never
in it) and rewards from the environment's own verifier via ``reward_funcs``.

Held-out evaluation: every held-out problem of difficulty 1 (the 25 sums whose first
operand is larger, ``7+2=``; training only ever sees ``2+7=``), one greedy episode each
through gymforge's runner with :class:`TransformersPolicyFactory`. It runs before training,
every ``--eval-every`` steps and at the end. The checkpoint reported as "selected" is the
one with the best held-out success (ties: the earliest), never chosen on training reward;
the final-step checkpoint is reported too.

    .venv/bin/python examples/grpo_baseline.py --seeds 0 1 2 --out runs/grpo-digits

Writes ``OUT/results.json`` and prints a Markdown table (mean and SD over seeds). To use
both cores, run one seed per process and then ``--combine DIR DIR DIR --out OUT``.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

import torch
from transformers import TrainerCallback
from transformers import logging as hf_logging
from trl import GRPOConfig, GRPOTrainer

from gymforge.envs.digits import DigitsEnv, problem_ids
from gymforge.integrations.hf_policy import TransformersPolicyFactory
from gymforge.integrations.tiny import char_tokenizer, tiny_llama
from gymforge.integrations.trl import reward_funcs, task_dataset
from gymforge.rollout import LocalExecutor, RunSpec, run

DIFFICULTY = 1
MAX_COMPLETION = 1  # difficulty 1 answers are one token


def evaluate(model: Any, tokenizer: Any, task_ids: list[str]) -> float:
    """Greedy success rate over ``task_ids`` (one episode each, env seed 0)."""
    was_training = model.training
    model.eval()
    policy = TransformersPolicyFactory(
        model, tokenizer, max_new_tokens=MAX_COMPLETION, temperature=0.0, checkpoint="eval"
    )
    try:
        spec = RunSpec(env="digits", policy="transformers", tasks=task_ids)
        result = asyncio.run(run(spec, LocalExecutor(DigitsEnv, policy)))
    finally:
        model.train(was_training)
    episodes = result.episodes
    return sum(e["success"] for e in episodes) / len(episodes)


class HeldoutEval(TrainerCallback):  # type: ignore[misc]
    """Evaluates held-out (and train) success every ``every`` steps; keeps the weights of
    the best held-out step."""

    def __init__(self, model: Any, tokenizer: Any, every: int) -> None:
        self.model, self.tokenizer, self.every = model, tokenizer, every
        self.heldout, self.train = (
            problem_ids("heldout", DIFFICULTY),
            problem_ids("train", DIFFICULTY),
        )
        self.history: list[dict[str, float]] = []
        self.best: tuple[float, int, dict[str, torch.Tensor]] | None = None

    def record(self, step: int) -> dict[str, float]:
        point = {
            "step": step,
            "heldout": evaluate(self.model, self.tokenizer, self.heldout),
            "train": evaluate(self.model, self.tokenizer, self.train),
        }
        self.history.append(point)
        if self.best is None or point["heldout"] > self.best[0]:
            self.best = (point["heldout"], step, copy.deepcopy(self.model.state_dict()))
        return point

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.global_step % self.every == 0 and state.global_step < state.max_steps:
            self.record(state.global_step)


def seed_setup(seed: int, opts: argparse.Namespace) -> tuple[Any, Any, Any]:
    """``(training rows, tokenizer, model)`` of one seed: the train split of difficulty 1,
    a character tokenizer trained on its prompts, a random-init tiny Llama."""
    train = task_dataset(
        DigitsEnv,
        opts.rows,
        seed=seed,
        split="train",
        difficulties=[DIFFICULTY],
        prompt_format="text",
    )
    tokenizer = char_tokenizer(train["prompt"])
    model = tiny_llama(
        tokenizer, hidden_size=opts.hidden, intermediate_size=2 * opts.hidden, seed=seed
    )
    return train, tokenizer, model


def train_seed(seed: int, opts: argparse.Namespace) -> dict[str, Any]:
    t0 = time.perf_counter()
    train, tokenizer, model = seed_setup(seed, opts)
    evals = HeldoutEval(model, tokenizer, opts.eval_every)
    before = evals.record(0)
    config = GRPOConfig(
        output_dir=str(Path(opts.out) / f"seed{seed}"),
        use_cpu=True,
        report_to="none",
        seed=seed,
        max_steps=opts.steps,
        per_device_train_batch_size=opts.batch,
        num_generations=opts.generations,
        max_completion_length=MAX_COMPLETION,
        temperature=opts.temperature,
        learning_rate=opts.lr,
        lr_scheduler_type="constant",
        beta=0.0,
        entropy_coef=opts.entropy,
        logging_steps=50,
        save_strategy="no",
        disable_tqdm=True,
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=reward_funcs(DigitsEnv),
        args=config,
        train_dataset=train,
        processing_class=tokenizer,
        callbacks=[evals],
    )
    trainer.train()
    final = evals.record(opts.steps)
    assert evals.best is not None
    best_heldout, best_step, best_state = evals.best
    model.load_state_dict(best_state)
    logs = [h for h in trainer.state.log_history if "gymforge/success" in h]
    return {
        "seed": seed,
        "before": before,
        "final": final,
        "selected": {"step": best_step, "heldout": best_heldout},
        "history": evals.history,
        "train_success_last_log": logs[-1]["gymforge/success"] if logs else None,
        "seconds": round(time.perf_counter() - t0, 1),
    }


def mean_sd(values: list[float]) -> tuple[float, float]:
    return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    before = [r["before"]["heldout"] for r in runs]
    selected = [r["selected"]["heldout"] for r in runs]
    final = [r["final"]["heldout"] for r in runs]
    out: dict[str, Any] = {}
    for name, after in (("selected", selected), ("final", final)):
        rises = [a - b for a, b in zip(after, before, strict=True)]
        (mb, sb), (ma, sa), (mr, sr) = mean_sd(before), mean_sd(after), mean_sd(rises)
        bar = 2 * max(sb, sa, sr)
        out[name] = {
            "before_mean": mb,
            "before_sd": sb,
            "after_mean": ma,
            "after_sd": sa,
            "rise_mean": mr,
            "rise_sd": sr,
            "two_sd_bar": bar,
            "rise_exceeds_2sd": mr > bar,
        }
    return out


def table(runs: list[dict[str, Any]], summary: dict[str, Any]) -> str:
    lines = [
        "| seed | held-out before | held-out after (selected, step) | held-out after (final) "
        "| train after (final) | seconds |",
        "|---|---|---|---|---|---|",
    ]
    for r in runs:
        lines.append(
            f"| {r['seed']} | {r['before']['heldout']:.2f} | {r['selected']['heldout']:.2f} "
            f"({r['selected']['step']}) | {r['final']['heldout']:.2f} | {r['final']['train']:.2f} "
            f"| {r['seconds']} |"
        )
    for name in ("selected", "final"):
        s = summary[name]
        lines.append(
            f"| **mean ± SD ({name})** | {s['before_mean']:.3f} ± {s['before_sd']:.3f} | "
            f"{s['after_mean']:.3f} ± {s['after_sd']:.3f} | rise {s['rise_mean']:.3f} ± "
            f"{s['rise_sd']:.3f} | 2 SD bar {s['two_sd_bar']:.3f} | "
            f"{'passes' if s['rise_exceeds_2sd'] else 'FAILS'} |"
        )
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--eval-every", type=int, default=50)
    p.add_argument("--rows", type=int, default=2000, help="training dataset rows")
    p.add_argument("--batch", type=int, default=128, help="completions per step")
    p.add_argument("--generations", type=int, default=8)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--entropy", type=float, default=0.05, help="GRPOConfig.entropy_coef")
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--hidden", type=int, default=64, help="model width (MLP is twice that)")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    p.add_argument("--out", default="runs/grpo-digits")
    p.add_argument(
        "--combine",
        nargs="+",
        metavar="DIR",
        help="train nothing: summarise the results.json of runs made separately (one seed "
        "per process, in parallel) into OUT/results.json",
    )
    opts = p.parse_args()
    torch.set_num_threads(opts.threads)
    hf_logging.set_verbosity_error()
    run_or_combine(opts, train_seed)


def run_or_combine(
    opts: argparse.Namespace, train: Callable[[int, argparse.Namespace], Any]
) -> None:
    """Train ``opts.seeds`` with ``train`` (or, with ``--combine``, read the results of runs
    made apart, refusing different settings or a repeated seed), then write
    ``OUT/results.json`` and print the table."""
    Path(opts.out).mkdir(parents=True, exist_ok=True)
    runs = []
    configs = []
    if opts.combine:
        for folder in opts.combine:
            part = json.loads((Path(folder) / "results.json").read_text())
            runs += part["runs"]
            configs.append({k: v for k, v in part["config"].items() if k not in ("seeds", "out")})
        if any(c != configs[0] for c in configs):
            raise SystemExit("--combine: the runs were made with different settings")
        if len({r["seed"] for r in runs}) != len(runs):
            raise SystemExit("--combine: a seed appears twice")
    for seed in [] if opts.combine else opts.seeds:
        result = train(seed, opts)
        runs.append(result)
        print(json.dumps({k: result[k] for k in ("seed", "before", "selected", "final")}))
    summary = summarize(runs)
    config = {**configs[0], "seeds": [r["seed"] for r in runs]} if configs else vars(opts)
    report = {"config": config, "torch": torch.__version__, "runs": runs, "summary": summary}
    (Path(opts.out) / "results.json").write_text(json.dumps(report, indent=2) + "\n")
    print(table(runs, summary))


if __name__ == "__main__":
    main()
