"""What typed truth costs generation and reset, against the dict-truth code it replaced.

Claim: task generation and reset are within 5% of the last commit whose families returned
truth as plain dicts (``DICT_TRUTH``, the first parent of the typed-truth merge), family by
family.

Method: the parent commit is checked out into a temporary git worktree (or ``--parent DIR``
names one). One long-lived child process per checkout imports that checkout's gymforge,
loads the environments both checkouts have (the same on both sides: one added since brings
its own dependencies, and their side effects on the process are not typed truth's) and
measures on request, in CPU time of that process (so other load on the machine does not
count), one family at a time: generation, ``family.task(level, seed)`` over ``--tasks``
fresh seeds across its levels; and reset, ``env.reset(task_id, seed)`` over as many fresh
task ids, each reset once (``reset``: a new task, generating it and parsing its truth are
part of the cost), at once again (``reset_again``: the same task while it is in use, as a
served session or a group of rollouts resets it) and, once ``CHUNK`` tasks later were reset,
a third time (``reset_later``: a task reset again after its episode dropped it, which the
environment builds anew unless its family keeps it, as the world families' caches do; the
dict-truth commit rebuilds every task it resets). Every round
draws new seeds, so nothing either side memoises is ever timed as generation or first
reset. Each task is timed on its own (less the cost of reading the clock), and each
place in the list keeps the least time any round took there: on a shared machine a burst
of other work spoils a few tasks of a round, not the round. Both sides are given the same
tasks in each place, so they keep their best of the same candidates. The two children take
turns every ``CHUNK`` tasks (A, B, then B, A for the next chunk and the next round), so a
change in the machine's load, which lasts longer than a chunk, hits both sides of each ratio
alike: with whole families as turns, a burst of load on a 2-core machine shifted single
ratios by 0.3x either way. Both children run on the same CPU, and each freezes what it
imported and built out of the garbage collector's way before measuring. An A/A run (this
file, the dict-truth commit on both sides, 3 rounds, load 3-5) gave 0.95-1.08: at that load a
ratio within 1.05 needs 5 or more rounds to be told from noise.

Run: python benchmarks/typed_truth.py [--rounds 7] [--tasks 100] [--parent DIR] [--only a,b]
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
from statistics import mean

DICT_TRUTH = "43ed455"
ROOT = Path(__file__).resolve().parent.parent
GIT_WORKTREE = ("git", "-C", str(ROOT), "worktree")
CHUNK = 10  # tasks a side measures before the other side takes its turn

CHILD = r"""
import asyncio, gc, json, sys, time
from gymforge.registry.handle import task_source
from gymforge.registry.resolve import BUILTIN, make_env

# the environments this checkout has; the parent answers with those both sides load
print(json.dumps(sorted(BUILTIN)), flush=True)
load = json.loads(sys.stdin.readline())
envs, families = {}, {}
for env_id in load:
    env = make_env(env_id)
    source = task_source(env)
    if source is None:
        continue
    # one reset first: an environment's first reset imports and builds what it keeps
    # (the toolset, lazily imported modules), which no later reset pays
    first = next(iter(sorted(source.families.values(), key=lambda f: f.name)))
    asyncio.run(env.reset(first.task(min(first.levels), 1).task_id, 0))
    envs[env_id] = env
    for name, family in source.families.items():
        families[name] = (env, family)
# what both sides imported and built is frozen out of the collector's way: a full collection
# then walks what the measuring made, not the code base (the typed side imports twice as
# many modules, for everything else it grew since, and paid 1.2x for it in support's
# generation); collections of what the measured code allocates are still timed
gc.collect()
gc.freeze()
print(json.dumps(sorted(families)), flush=True)


clock = time.process_time
# what one clock reading costs, taken off every timed task
overhead = min(-(clock() - clock()) for _ in range(2000))


async def resets(env, ids, places):
    first, again, later = [], [], []
    for i, tid in zip(places, ids):
        c = clock()
        await env.reset(tid, i)
        first.append(clock() - c - overhead)
        c = clock()
        await env.reset(tid, i)
        again.append(clock() - c - overhead)
    for i, tid in zip(places, ids):
        c = clock()
        await env.reset(tid, i)
        later.append(clock() - c - overhead)
    return first, again, later


for line in sys.stdin:
    name, start, n, round_ = json.loads(line)
    env, family = families[name]
    levels = sorted(family.levels)
    base = 1_000_000 * (round_ + 1)  # new seeds every round: nothing memoised is timed
    places = range(start, start + n)
    gen = []
    if start == 0:
        gc.collect()  # a full collection of another family's garbage is not this one's cost
    for i in places:
        c = clock()
        family.task(levels[i % len(levels)], base + i)
        gen.append(clock() - c - overhead)
    # ids only: a task generated here would be one a memo could hand the reset for free
    ids = [family.task_id(levels[i % len(levels)], base + 500_000 + i) for i in places]
    first, again, later = asyncio.run(resets(env, ids, places))
    print(
        json.dumps({"gen": gen, "reset": first, "reset_again": again, "reset_later": later}),
        flush=True,
    )
"""

Figures = dict[str, list[float]]


class Child:
    """A child process measuring one checkout, one family per request."""

    def __init__(self, checkout: Path) -> None:
        self.checkout = checkout
        self.proc = subprocess.Popen(
            [sys.executable, "-c", CHILD],
            cwd=checkout,
            env={**os.environ, "PYTHONPATH": str(checkout)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        if hasattr(os, "sched_setaffinity"):
            # both sides on the same CPU: one side kept on a CPU that other work shares
            # lost its caches more often, and an A/A run of one commit against itself
            # measured 1.1-1.2x
            os.sched_setaffinity(self.proc.pid, {min(os.sched_getaffinity(0))})
        self.env_ids: list[str] = json.loads(self._line())
        self.families: list[str] = []

    def load(self, env_ids: list[str]) -> None:
        """Load ``env_ids`` (and reset each once); then the child names its families."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(env_ids) + "\n")
        self.proc.stdin.flush()
        self.families = json.loads(self._line())

    def _line(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"measuring {self.checkout} failed (see its error above)")
        return line

    def measure(self, family: str, start: int, n: int, round_: int) -> Figures:
        """Tasks ``start`` to ``start + n`` of ``family``'s list in round ``round_``."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps([family, start, n, round_]) + "\n")
        self.proc.stdin.flush()
        return dict(json.loads(self._line()))

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


def best(a: Figures | None, b: Figures) -> Figures:
    """Task by task, the least CPU time any round took for the task in that place (both
    sides are given the same tasks in each place, so the same candidates)."""
    return b if a is None else {k: [min(x, y) for x, y in zip(a[k], b[k], strict=True)] for k in b}


def compare(
    parent: Path, rounds: int, n: int, skip: str, only: list[str]
) -> tuple[list[str], dict[str, tuple[Figures, Figures]]]:
    """The environments loaded on both sides, and each family's figures (dict, typed)."""
    old, new = Child(parent), Child(ROOT)
    try:
        # only the environments both checkouts have, on both sides: an environment added
        # since loads its own dependencies, whose side effects are not typed truth's cost
        # (numpy, which the spreadsheet environment imports, loads a library that
        # registers printf hooks with the C library, and from then on every printf in the
        # process, such as each datetime.isoformat, takes its slow path: 8% of a support
        # task's instructions, in the typed process only)
        both = sorted(set(old.env_ids) & set(new.env_ids) - set(skip.split(",")))
        old.load(both)
        new.load(both)
        out: dict[str, tuple[Figures, Figures]] = {}
        for fam in sorted(set(old.families) & set(new.families)):
            if only and not any(fam.startswith(prefix) for prefix in only):
                continue
            o = t = None
            for r in range(rounds):
                ro: Figures = {}
                rt: Figures = {}
                # the sides take turns chunk by chunk (A, B then B, A), so that a burst of
                # other load on the machine hits both sides of a ratio alike
                for k, start in enumerate(range(0, n, CHUNK)):
                    size = min(CHUNK, n - start)
                    pair = [(old, ro), (new, rt)]
                    for child, into in pair if (r + k) % 2 == 0 else pair[::-1]:
                        for key, values in child.measure(fam, start, size, r).items():
                            into.setdefault(key, []).extend(values)
                o, t = best(o, ro), best(t, rt)
            assert o is not None and t is not None
            out[fam] = (o, t)
        return both, out
    finally:
        old.close()
        new.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--parent", type=Path, help="a checkout of the dict-truth commit")
    ap.add_argument("--skip", default="swe", help="environment ids to leave out (slow resets)")
    ap.add_argument("--only", default="", help="measure only families starting so (a,b,...)")
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        parent = args.parent
        if parent is None:
            parent = Path(tmp) / "dict-truth"
            subprocess.run(
                [*GIT_WORKTREE, "add", "-q", "--detach", str(parent), DICT_TRUTH],
                check=True,
            )
        try:
            only = [p for p in args.only.split(",") if p]
            loaded, figures = compare(parent, args.rounds, args.tasks, args.skip, only)
        finally:
            if args.parent is None:
                subprocess.run([*GIT_WORKTREE, "remove", "--force", str(parent)])
    if not figures:  # a verdict over no family would say "ok" of nothing
        raise SystemExit(f"no family measured (--only {args.only!r}, --skip {args.skip!r})")
    print(
        f"# {platform.machine()}, {os.cpu_count()} CPUs, load average {load0:.1f} at start, "
        f"{os.getloadavg()[0]:.1f} at end; CPU us per task, best of {args.rounds} interleaved "
        f"rounds; ratio = typed / dict ({DICT_TRUTH})\n# environments loaded on both sides: "
        + ", ".join(loaded)
    )
    cols = ("gen", "reset", "reset_again", "reset_later")
    print(
        f"{'family':<26}"
        + "".join(f"{c + ' dict':>18}{c + ' typed':>19}{'ratio':>7}" for c in cols)
    )
    worst: dict[str, tuple[float, str]] = {c: (0.0, "") for c in cols}
    for fam, (old, new) in figures.items():
        line = f"{fam:<26}"
        for c in cols:
            o, n = mean(old[c]) * 1e6, mean(new[c]) * 1e6
            ratio = n / o if o > 0 else float("inf")  # no time measured: no verdict passes
            worst[c] = max(worst[c], (ratio, fam))
            line += f"{o:>18.1f}{n:>19.1f}{ratio:>7.2f}"
        print(line)
    for c in cols:
        r, fam = worst[c]
        print(f"worst {c}: {r:.2f}x ({fam}) {'ok' if r <= 1.05 else 'OVER 5%'}")


if __name__ == "__main__":
    main()
