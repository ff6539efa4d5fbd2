"""Sweep every reasoning-gym dataset with cheap answers that solve nothing.

Claim measured: for each dataset, how often a battery of non-solving answers (empty, constants,
the question echoed, candidate lists joined into one answer, another task's answer, the
prompt's numbers, a very long answer, right format with junk content, ``\\boxed{}`` wrappers,
a wrong answer padded or re-cased) passes the adapter's judgement (``scoring.score``: the
answer rules, then the strict verifier or the dataset's own ``score_answer``), and the mean
raw score the scorer gives them (partial credit is kept in the verdict facts; the reward pays
a pass only). The dataset's scorer runs in this process (``score_in_sandbox`` replaced by a
direct call on the entry exactly as the sandbox decodes it): the battery holds no code, and
the sandbox changes where a score is computed, never its value.

A constant that passes because a dataset's answers are skewed is the dataset's (its chance
level, listed as such); a hedge (several candidates in one answer) or the echoed question
that passes is a lax scorer the adapter must refuse.

Run: python benchmarks/rg_answer_sweep.py [--datasets a,b] [--seeds 20] [--timeout 240]
     [--jobs 2] [--json out.jsonl]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def battery(question: str, gold: str, others: list[str], common: str) -> dict[str, str]:
    """Answers that solve nothing, by name (gold is used only to build a wrong answer of
    the same shape and to keep hedges honest: every hedge holds the gold among wrong
    candidates a policy could list without solving)."""
    from gymforge.kit.redteam import wrong_answer

    wrong = wrong_answer(gold)
    other = next((o for o in others if o.strip() != gold.strip()), wrong)
    numbers = NUMBER.findall(question)
    candidates = list(dict.fromkeys([*others[:8], gold]))
    return {
        "empty": "",
        "c_0": "0",
        "c_1": "1",
        "c_yes": "yes",
        "c_no": "no",
        "c_True": "True",
        "c_False": "False",
        "c_A": "A",
        "c_common": common,
        "echo": question,
        "opts_AorB": "A or B",
        "opts_ABCD": "A, B, C, D",
        "yes_or_no": "yes or no",
        "true_false": "True False",
        "other_gold": other,
        "numbers_all": " ".join(numbers),
        "numbers_first": numbers[0] if numbers else "",
        "numbers_last": numbers[-1] if numbers else "",
        "long": ("x " * 20_000).strip(),
        "junk_format": wrong,
        "boxed_wrong": f"\\boxed{{{wrong}}}",
        "boxed_empty": "\\boxed{}",
        "pad_wrong": f"  {wrong.upper()} !!.  ",
        "hedge_comma": ", ".join(candidates[-2:] if other == wrong else [other, gold]),
        "hedge_or": f"{other} or {gold}",
        "hedge_newline": f"{other}\n{gold}",
        "hedge_all": ", ".join(candidates),
        "hedge_all_or": " or ".join(candidates),
        "gold_then_wrong": f"{gold} {wrong}",
        "wrong_then_gold": f"{wrong} {gold}",
        "gold_in_sentence": f"It is not {gold}.",
    }


async def _direct(dataset_cls: Any, config_cls: Any, config: Any, entry: Any, answer: str) -> Any:
    from gymforge.envs.reasoning_gym import inside
    from gymforge.envs.reasoning_gym.quiet import quiet

    cfg = config_cls(**{**config, "seed": 0, "size": 1})
    with quiet():
        return float(
            dataset_cls(config=cfg).score_answer(answer, inside.decode(inside.encode(entry)))
        ), {}


def sweep(dataset: str, seeds: int) -> dict[str, Any]:
    """``{attack: [passes, n, sum of scores]}`` over ``seeds`` tasks of ``dataset``."""
    from gymforge.envs.reasoning_gym import scoring
    from gymforge.envs.reasoning_gym.env import DEFAULT_TOKENS
    from gymforge.envs.reasoning_gym.family import ReasoningGymFamily

    scoring.score_in_sandbox = _direct  # type: ignore[assignment]
    family = ReasoningGymFamily(dataset)
    levels = sorted(family.levels)[:3]
    tasks = [family.task(levels[s % len(levels)], s) for s in range(seeds)]
    golds = [t.truth["answer"] for t in tasks]
    if any(g is None for g in golds):
        return {"dataset": dataset, "skipped": "no stored answer"}
    common = Counter(golds).most_common(1)[0][0]
    limit = scoring.answer_chars(DEFAULT_TOKENS)
    stats: dict[str, list[float]] = {}
    for i, task in enumerate(tasks):
        entry = family.entry(task.truth["level"], task.truth["item_seed"])
        others = golds[i + 1 :] + golds[:i]
        gold = str(golds[i])
        for name, answer in battery(task.prompt, gold, others, common).items():
            reply = f"<answer>{answer}</answer>"
            try:
                out = asyncio.run(
                    scoring.score(family, task.truth["level"], entry, reply, limit, True)
                )
                passed, value = out.passed, float(out.facts.get("score", 1.0 if out.passed else 0))
            except Exception:  # the scorer crashed on it: a verifier error, not a pass
                passed, value = False, 0.0
            right = answer.strip() == gold.strip()
            row = stats.setdefault(name, [0, 0, 0.0, 0])
            row[0] += passed and not right
            row[1] += 1
            row[2] += value if not right else 0.0
            row[3] += right
    return {"dataset": dataset, "stats": stats}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--datasets", default="")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=240)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", default="")
    parser.add_argument("--one", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(sweep(args.one, args.seeds)))
        return
    from reasoning_gym.factory import DATASETS

    names = args.datasets.split(",") if args.datasets else sorted(DATASETS)

    def run(name: str) -> dict[str, Any]:
        cmd = [sys.executable, __file__, "--one", name, "--seeds", str(args.seeds)]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            return {"dataset": name, "skipped": f"over {args.timeout:.0f} s"}
        lines = done.stdout.strip().splitlines()
        if done.returncode or not lines:
            return {"dataset": name, "skipped": (done.stderr.strip().splitlines() or ["?"])[-1]}
        return dict(json.loads(lines[-1]))

    out = open(args.json, "w") if args.json else None  # noqa: SIM115
    with ThreadPoolExecutor(args.jobs) as pool:
        for result in pool.map(run, names):
            if out:
                out.write(json.dumps(result) + "\n")
                out.flush()
            print(_line(result), flush=True)


def _line(result: dict[str, Any]) -> str:
    if "skipped" in result:
        return f"{result['dataset']}: skipped ({result['skipped'][:100]})"
    paid = []
    for name, (passes, n, total, right) in result["stats"].items():
        wrong_n = n - right
        if passes or (wrong_n and total / wrong_n >= 0.01):
            paid.append(f"{name} {int(passes)}/{wrong_n} pass, mean {total / max(wrong_n, 1):.2f}")
    return f"{result['dataset']}: " + ("; ".join(paid) or "nothing paid")


if __name__ == "__main__":
    main()
