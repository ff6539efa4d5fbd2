"""PPO baseline beside the GRPO one: the same model, data, budget and held-out evaluation
on ``digits``, with a learned value head (a critic) instead of group-relative baselines.

No maintained TRL trainer has a value model any more: ``PPOTrainer`` lived in
``trl.experimental.ppo`` until TRL 1.12, was removed in 1.13, and wanted a reward *model*
(a sequence classifier) rather than a reward function. So this PPO is written here, on
torch, against the same gymforge pieces GRPO uses: the train split from ``task_dataset``
and rewards from the environment's own verifier via ``reward_funcs`` (summed components:
``task``, ``format``, ``step_cost``), the tiny random-init model and character tokenizer of
``gymforge.integrations.tiny``, and ``grpo_baseline``'s held-out evaluation, checkpoint
selection and summary.

Each step samples 16 prompts x 8 completions (128, as GRPO's steps do) at temperature 1.
An answer is one token, so an episode is one action and the advantage is ``r - V(prompt)``
(GAE with one step), normalised over the batch. The update is PPO's clipped surrogate
(``--clip`` 0.2) over ``--epochs`` passes in minibatches of ``--minibatch``, plus
``--vf-coef`` x the value loss, minus ``--entropy`` x the entropy; one Adam optimizer over
the model and the value head (a linear layer on the last hidden state of the prompt),
gradient norm clipped at 1.

    .venv/bin/python examples/ppo_baseline.py --seeds 0 1 2 --out runs/ppo-digits

Writes ``OUT/results.json`` and prints the same table as ``grpo_baseline.py``; ``--combine``
summarises runs made one seed per process.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from typing import Any

import torch
from grpo_baseline import HeldoutEval, run_or_combine, seed_setup
from torch import nn

from gymforge.envs.digits import DigitsEnv
from gymforge.integrations.trl import reward_funcs


class Critic(nn.Module):
    """The value head: a scalar from the prompt's last hidden state."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.head = nn.Linear(hidden, 1)

    def forward(self, last_hidden: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.head(last_hidden).squeeze(-1)
        return out


def forward(model: Any, critic: Critic, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Next-token logits and values at the end of each prompt."""
    out = model(input_ids=ids, output_hidden_states=True)
    return out.logits[:, -1, :], critic(out.hidden_states[-1][:, -1, :])


def train_seed(seed: int, opts: argparse.Namespace) -> dict[str, Any]:
    t0 = time.perf_counter()
    rng = random.Random(seed)
    torch.manual_seed(seed)
    train, tokenizer, model = seed_setup(seed, opts)
    critic = Critic(opts.hidden)
    optim = torch.optim.Adam([*model.parameters(), *critic.parameters()], lr=opts.lr)
    [reward] = reward_funcs(DigitsEnv)
    loop = asyncio.new_event_loop()
    evals = HeldoutEval(model, tokenizer, opts.eval_every)
    before = evals.record(0)
    rows = list(range(len(train)))
    train_success: list[float] = []
    for step in range(1, opts.steps + 1):
        picked = [i for i in rng.sample(rows, opts.prompts) for _ in range(opts.generations)]
        prompts = [train["prompt"][i] for i in picked]
        ids = torch.tensor([tokenizer(p)["input_ids"] for p in prompts])
        with torch.no_grad():
            logits, values = forward(model, critic, ids)
            dist = torch.distributions.Categorical(logits=logits / opts.temperature)
            actions = dist.sample()
            old_logp = dist.log_prob(actions)
        completions = [tokenizer.decode([int(a)]) for a in actions]
        scores = loop.run_until_complete(
            reward(
                prompts=prompts,
                completions=completions,
                task_id=[train["task_id"][i] for i in picked],
                seed=[train["seed"][i] for i in picked],
            )
        )
        r = torch.tensor([float(s or 0.0) for s in scores])
        train_success.append(float((r >= 1.0).float().mean()))
        adv = r - values
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        for _ in range(opts.epochs):
            order = torch.randperm(len(picked))
            for mb in order.split(opts.minibatch):
                logits, v = forward(model, critic, ids[mb])
                dist = torch.distributions.Categorical(logits=logits / opts.temperature)
                ratio = torch.exp(dist.log_prob(actions[mb]) - old_logp[mb])
                surrogate = torch.min(
                    ratio * adv[mb], torch.clamp(ratio, 1 - opts.clip, 1 + opts.clip) * adv[mb]
                )
                loss = (
                    -surrogate.mean()
                    + opts.vf_coef * ((v - r[mb]) ** 2).mean()
                    - opts.entropy * dist.entropy().mean()
                )
                optim.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_([*model.parameters(), *critic.parameters()], 1.0)
                optim.step()
        if step % opts.eval_every == 0 and step < opts.steps:
            evals.record(step)
    loop.close()
    final = evals.record(opts.steps)
    assert evals.best is not None
    best_heldout, best_step, _ = evals.best
    return {
        "seed": seed,
        "before": before,
        "final": final,
        "selected": {"step": best_step, "heldout": best_heldout},
        "history": evals.history,
        "train_success_last_50_steps": sum(train_success[-50:]) / len(train_success[-50:]),
        "seconds": round(time.perf_counter() - t0, 1),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--eval-every", type=int, default=50)
    p.add_argument("--rows", type=int, default=2000, help="training dataset rows")
    p.add_argument("--prompts", type=int, default=16, help="prompts per step")
    p.add_argument("--generations", type=int, default=8, help="completions per prompt")
    p.add_argument("--epochs", type=int, default=2, help="PPO passes over each batch")
    p.add_argument("--minibatch", type=int, default=64)
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--entropy", type=float, default=0.05)
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--hidden", type=int, default=64, help="model width (MLP is twice that)")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    p.add_argument("--out", default="runs/ppo-digits")
    p.add_argument("--combine", nargs="+", metavar="DIR", help="summarise runs made apart")
    opts = p.parse_args()
    torch.set_num_threads(opts.threads)
    run_or_combine(opts, train_seed)


if __name__ == "__main__":
    main()
