"""What typed truth costs generation and reset, against the dict-truth code it replaced.

Claim: task generation and reset are within 5% of the last commit whose families returned
truth as plain dicts (``DICT_TRUTH``, the first parent of the typed-truth merge), family by
family.

Method: the parent commit is checked out into a temporary git worktree (or ``--parent DIR``
names one). For each family of every built-in environment that exists in both, one child
process per checkout measures, in CPU time of that process (so other load on the machine
does not count): generation, ``family.task(level, seed)`` over fresh seeds at every level;
and reset, ``env.reset(task_id, seed)`` over a fixed list of that family's task ids, each
reset once (a new task: parsing its truth is part of the cost) and then again (the same
task, as a served session or a group of rollouts resets it). The two checkouts take turns
for ``--rounds`` rounds and the best round of each is kept.

Run: python benchmarks/typed_truth.py [--rounds 3] [--tasks 100] [--parent DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

DICT_TRUTH = "43ed455"
ROOT = Path(__file__).resolve().parent.parent
GIT = ("git", "-C", str(ROOT), "worktree")

CHILD = r"""
import asyncio, gc, json, sys, time
from gymforge.registry.handle import task_source
from gymforge.registry.resolve import BUILTIN, make_env

n_tasks = int(sys.argv[1])
skip = set(sys.argv[2].split(",")) if sys.argv[2] else set()
out = {}


async def resets(env, ids):
    gc.collect()
    c0 = time.process_time()
    for i, tid in enumerate(ids):
        await env.reset(tid, i)
    first = time.process_time() - c0
    gc.collect()
    c1 = time.process_time()
    for i, tid in enumerate(ids):
        await env.reset(tid, i)
    return first / len(ids), (time.process_time() - c1) / len(ids)


for env_id in sorted(BUILTIN):
    if env_id in skip:
        continue
    env = make_env(env_id)
    source = task_source(env)
    if source is None:
        continue
    # one reset first: an environment's first reset imports and builds what it keeps
    # (the toolset, lazily imported modules), which no later reset pays
    first = next(iter(sorted(source.families.values(), key=lambda f: f.name)))
    asyncio.run(env.reset(first.task(min(first.levels), 1).task_id, 0))
    for name, family in sorted(source.families.items()):
        levels = sorted(family.levels)
        gc.collect()  # a full collection of another family's garbage is not this one's cost
        c0 = time.process_time()
        for i in range(n_tasks):
            family.task(levels[i % len(levels)], 50_000 + i)
        gen = (time.process_time() - c0) / n_tasks
        ids = [family.task(levels[i % len(levels)], 90_000 + i).task_id for i in range(n_tasks)]
        first, again = asyncio.run(resets(env, ids))
        out[name] = {"gen": gen, "reset": first, "reset_again": again}
    asyncio.run(env.close())
print(json.dumps(out))
"""


def measure(checkout: Path, n_tasks: int, skip: str) -> dict[str, dict[str, float]]:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(n_tasks), skip],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"measuring {checkout} failed:\n{proc.stderr[-2000:]}")
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


Figures = dict[str, dict[str, float]]


def best(a: Figures | None, b: Figures) -> Figures:
    if a is None:
        return b
    return {f: {k: min(a[f][k], b[f][k]) for k in b[f]} for f in b if f in a}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    # at most TaskSource.RESOLVED (128), so that the second resets find their tasks kept
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--parent", type=Path, help="a checkout of the dict-truth commit")
    ap.add_argument("--skip", default="swe", help="environment ids to leave out (slow resets)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        parent = args.parent
        if parent is None:
            parent = Path(tmp) / "dict-truth"
            subprocess.run(
                [
                    "git",
                    "-C",
                    str(ROOT),
                    "worktree",
                    "add",
                    "-q",
                    "--detach",
                    str(parent),
                    DICT_TRUTH,
                ],
                check=True,
            )
        try:
            old = new = None
            for _ in range(args.rounds):
                old = best(old, measure(parent, args.tasks, args.skip))
                new = best(new, measure(ROOT, args.tasks, args.skip))
        finally:
            if args.parent is None:
                subprocess.run(
                    ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(parent)]
                )
    assert old is not None and new is not None
    print(
        f"# {platform.machine()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; "
        f"CPU us per task, best of {args.rounds}; ratio = typed / dict ({DICT_TRUTH})"
    )
    cols = ("gen", "reset", "reset_again")
    print(
        f"{'family':<26}"
        + "".join(f"{c + ' dict':>14}{c + ' typed':>14}{'ratio':>7}" for c in cols)
    )
    worst: dict[str, tuple[float, str]] = {c: (0.0, "") for c in cols}
    for fam in sorted(set(old) & set(new)):
        line = f"{fam:<26}"
        for c in cols:
            o, n = old[fam][c] * 1e6, new[fam][c] * 1e6
            ratio = n / o if o > 0 else float("nan")
            worst[c] = max(worst[c], (ratio, fam))
            line += f"{o:>16.1f}{n:>16.1f}{ratio:>7.2f}"
        print(line)
    for c in cols:
        r, fam = worst[c]
        print(f"worst {c}: {r:.2f}x ({fam}) {'ok' if r <= 1.05 else 'OVER 5%'}")


if __name__ == "__main__":
    main()
