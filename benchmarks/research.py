"""Task generation and reset latency of the ``research`` environment.

Claims: every research family generates >= 1,000 tasks/s at every level, and ``env.reset``
takes p50 <= 5 ms, because a corpus and its FTS5 index are built once per corpus (into the
world template) and never per task or per reset.

Method, in one run:

- ``corpus build``: generating one corpus's documents (``corpus(size, index)``, uncached),
  and ``index build``: loading them into a fresh world template with its FTS5 index, per
  corpus size; these are paid once per corpus per process;
- ``tasks/s``: ``TaskFamily.task(level, seed)`` over fresh seeds for ``--seconds`` per family
  and level, corpora already built (as after the first task of each corpus), next to the
  trivial-family baseline of ``benchmarks/task_generation.py``; and the cold rate of the
  first pass over every corpus;
- ``reset``: ``env.reset`` on tasks never reset before (their task generated, their corpus's
  template cached), and on tasks reset before (warm); the baseline is the same reset with
  the template rebuilt on every call (what indexing the corpus per reset would cost);
- ``search``: one ``search`` tool call on the BM25 index, through ``env.step``.

Run: python benchmarks/research.py [--seconds 0.3] [--resets 300]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from task_generation import TRIVIAL, rate  # the same generation rate and baseline

from gymforge.core.types import ToolCall
from gymforge.envs.research import ResearchEnv
from gymforge.envs.research.corpus import corpus
from gymforge.envs.research.families import CORPORA, FAMILIES, LEVELS
from gymforge.tasks.family import ChoiceKnob
from gymforge.world.db import Template

SIZES = sorted(k["size"].values[0] for k in LEVELS.values() if isinstance(k["size"], ChoiceKnob))
N_CORPORA = CORPORA.hi - CORPORA.lo + 1


def ms(fn: Any) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1e3


def p(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def builds() -> None:
    print(f"{'once per corpus':<34}{'p50 ms':>9}{'docs':>7}")
    for size in SIZES:
        made = [ms(lambda i=i, n=size: corpus.__wrapped__(n, i)) for i in range(8)]
        rows = {"docs": corpus(size, 0).rows()}
        index = [ms(lambda r=rows: Template.build(ResearchEnv.schema, r)) for _ in range(8)]
        docs = len(rows["docs"])
        print(f"{f'corpus build, {size} companies':<34}{statistics.median(made):9.2f}{docs:7d}")
        print(f"{f'index build, {size} companies':<34}{statistics.median(index):9.2f}")


def generation(seconds: float) -> list[str]:
    cold = time.perf_counter()
    n = 0
    for family in FAMILIES:
        for level in sorted(family.levels):
            for i in range(N_CORPORA):
                family.generate({**family.params_for(level, i), "corpus": CORPORA.lo + i}, i)
                n += 1
    cold_rate = n / (time.perf_counter() - cold)
    base, _ = rate(TRIVIAL, 1, seconds, 0)
    print(f"\n{'family':<28}{'level':>6}{'tasks/s':>12}{'x baseline':>12}")
    print(f"{'(trivial baseline)':<28}{1:>6}{base:>12,.0f}{1.0:>12.2f}")
    slow = []
    for family in FAMILIES:
        for level in sorted(family.levels):
            r, _ = rate(family, level, seconds, 10_000)
            slow += [f"{family.name} d{level}"] if r < 1000 else []
            print(f"{family.name:<28}{level:>6}{r:>12,.0f}{r / base:>12.2f}")
    print(f"first task of every corpus (cold, corpus built): {cold_rate:,.0f} tasks/s over {n}")
    return slow


async def resets(n: int) -> float:
    env = ResearchEnv()
    single = ResearchEnv.tasks.families["research.single_fact"]
    for level in sorted(single.levels):  # every corpus's template, as after its first task
        for i in range(N_CORPORA):
            params = {**single.params_for(level, i), "corpus": CORPORA.lo + i}
            await env.reset(single.variant_id(params, 0), 0)
    ids = [t for s in range(3) for t in ResearchEnv.tasks.sample(n // 3, 500 + s, "train")]
    built = len(ResearchEnv.templates)
    fresh = [await _time(env.reset(t, 0)) for t in ids]
    assert len(ResearchEnv.templates) == built, "a timed reset built a corpus template"
    warm = [await _time(env.reset(t, 1)) for t in ids]
    templates = ResearchEnv.templates

    async def rebuilt(t: str) -> float:
        templates._items.clear()  # the baseline: index the corpus on every reset
        return await _time(env.reset(t, 2))

    naive = [await rebuilt(t) for t in ids[: n // 3]]
    search = []
    for t in ids[:50]:
        await env.reset(t, 3)
        for ev in env.truth.evidence:
            search.append(
                await _time(env.step(ToolCall(name="search", arguments={"query": ev.query})))
            )
    await env.close()
    print(f"\n{'reset':<46}{'p50 ms':>9}{'p99 ms':>9}{'n':>6}")
    for label, xs in (
        ("env reset, new task (its corpus seen before)", fresh),
        ("env reset, warm", warm),
        ("baseline: template + index rebuilt per reset", naive),
        ("search tool call (BM25), env.step", search),
    ):
        print(f"{label:<46}{statistics.median(xs):9.3f}{p(xs, 0.99):9.3f}{len(xs):6d}")
    ratio = statistics.median(naive) / statistics.median(fresh)
    print(f"baseline / new-task reset (p50): {ratio:.1f}x")
    return statistics.median(fresh)


async def _time(awaitable: Any) -> float:
    t0 = time.perf_counter()
    await awaitable
    return (time.perf_counter() - t0) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=0.3, help="time per family and level")
    ap.add_argument("--resets", type=int, default=300)
    args = ap.parse_args()
    builds()
    slow = generation(args.seconds)
    reset_p50 = asyncio.run(resets(args.resets))
    print(f"\nfamilies/levels under 1,000 tasks/s: {', '.join(slow) or 'none'}")
    print(f"reset p50 {reset_p50:.3f} ms: {'ok' if reset_p50 <= 5.0 else 'OVER 5 ms'}")


if __name__ == "__main__":
    main()
