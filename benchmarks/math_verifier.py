"""Math verifier: accuracy and latency of gymforge's ``MathVerifier`` next to ``math_verify``.

Claim: on the labelled answer forms gymforge gives no false pass and an accuracy at least
math_verify's; its p50 is no slower than math_verify's; on pathological inputs every verdict
comes back within the 1 s timeout (2 s bound).

Method: the labelled answer forms of ``tests/verify/data/math_answers.jsonl`` (300+ rows:
descriptive words, units, implicit multiplication, the last box, strict mode, demanded
forms, long chains of thought, the known false-pass traps, and ordinary integers,
fractions, decimals, expressions, sets, intervals, tuples, matrices, equations, text,
extraction tricks and code injection; see ``tests/verify/math_cases.py`` for the format).
Labels follow the math environment's contract: the last ``\\boxed{}`` outside ``<think>``
is the answer, ``\\boxed{5=2}`` is wrong for 2, 1.57 is wrong for pi/2, a unit the gold does
not state fails, a word that only says what was counted does not.

- gymforge: ``MathVerifier(cache_gold=False).verify(response, gold, strict=, form=)`` called
  sequentially (no queueing) on a warmed pool, the workers' gold cache cleared before each
  call (cold golds). Latency is wall-clock per call: extraction, pipe round trip and
  evaluation.
- math_verify (the ``bench`` extra; skipped with a message if missing):
  ``verify(parse(f"\\\\boxed{{{gold}}}"), parse(response))`` in this process. It has no
  strict mode and no notion of a demanded form, so the side-by-side accuracy covers the
  default-mode rows (``passed`` against ``label``); the strict rows and ``form_ok`` are
  reported for gymforge alone.
- A false pass is a verdict ``passed`` on a row labelled wrong; a false fail the reverse.
  Rows whose label follows a rule of gymforge's contract that another grader could decide
  otherwise (``contract``: the last box, a unit on a unitless gold, ``50\\%`` is 50...) are
  counted in the accuracy, and the accuracy without them is printed too.
- Pathological inputs (power towers, huge factorials, a million digits, 5000 nested
  parentheses) are timed separately. math_verify runs each of them in a forked child
  killed after ``MV_KILL_S`` seconds, because its own timeout (``signal.alarm``) does not
  stop C-level big-integer work.

Run: python benchmarks/math_verifier.py [--passes N]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import logging
import multiprocessing as mp
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "verify"))
from math_cases import Case, box, load_cases

from gymforge.verify.math import MathVerifier, default_pool

MV_KILL_S = 10.0


def _pathological() -> list[tuple[str, str, str]]:
    return [
        ("power tower 9^9^9^9", box("9^{9^{9^{9}}}"), "1"),
        ("(10^8)!", box("(10^{8})!"), "1"),
        ("a million digits", box("7" * 1_000_000), "7"),
        ("5000 nested parentheses", box("(" * 5000 + "1" + ")" * 5000), "1"),
        ("e^e^e^e^10", box("e^{e^{e^{e^{10}}}}"), "1"),
        ("10^10^10", box("10^{10^{10}}"), "1"),
        ("2^(2^100) mod-free", box("2^{2^{100}}"), "2"),
        ("3000 digits squared", box("7" * 3000 + "^{2}"), "1"),
        ("sin(e^e^14): slow evalf", box("\\sin(e^{e^{14}})"), "1"),
    ]


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


def _load_math_verify() -> tuple[Callable[[str, str], bool], str] | None:
    try:
        from math_verify import parse, verify
    except ImportError:
        return None
    logging.getLogger("math_verify").setLevel(logging.CRITICAL)  # it logs whole inputs

    def mv(response: str, gold: str) -> bool:
        return bool(verify(parse(f"\\boxed{{{gold}}}"), parse(response)))

    return mv, importlib.metadata.version("math-verify")


def _mv_child(response: str, gold: str, q: mp.Queue) -> None:  # type: ignore[type-arg]
    loaded = _load_math_verify()
    assert loaded is not None
    t0 = time.perf_counter()
    try:
        ok = loaded[0](response, gold)
    except Exception:
        ok = False
    q.put((ok, (time.perf_counter() - t0) * 1e3))


class Tally:
    """Verdicts of one tool on the cases: latencies, false passes, false fails."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.latency: list[float] = []
        self.false_pass: list[Case] = []
        self.false_fail: list[Case] = []
        self.n = 0

    def add(self, case: Case, passed: bool, ms: float, first_pass: bool) -> None:
        self.latency.append(ms)
        if not first_pass:
            return
        self.n += 1
        if passed and not case.label:
            self.false_pass.append(case)
        elif not passed and case.label:
            self.false_fail.append(case)

    @property
    def right(self) -> int:
        return self.n - len(self.false_pass) - len(self.false_fail)

    def plain_accuracy(self, cases: list[Case]) -> str:
        """Accuracy on the rows whose label needs no gymforge-specific rule."""
        n = sum(1 for c in cases if c.contract is None)  # strict rows all name a contract
        wrong = sum(1 for c in self.false_pass + self.false_fail if c.contract is None)
        return f"{n - wrong}/{n} ({(n - wrong) / max(1, n):.1%})"

    def row(self) -> str:
        lat = self.latency
        acc = f"{self.right}/{self.n} ({self.right / self.n:.1%})"
        return (
            f"{self.name:<24}{acc:>18}{len(self.false_pass):>8}{len(self.false_fail):>8}"
            f"{pct(lat, 0.5):>9.2f}{pct(lat, 0.99):>9.2f}{max(lat):>9.1f}"
        )


def _run_gymforge(cases: list[Case], passes: int) -> tuple[Tally, Tally, list[str]]:
    ver = MathVerifier(cache_gold=False)
    default_pool().start()
    for i in range(50):  # warm the pool and the workers on unrelated cases
        ver.verify(box(f"\\frac{{{i}}}{{3}}"), f"{i}/3")
    plain, strict = Tally("gymforge MathVerifier"), Tally("gymforge, strict rows")
    form_wrong: list[str] = []
    for p in range(passes):
        for c in cases:
            t0 = time.perf_counter()
            v = ver.verify(c.response, c.gold, strict=c.strict, form=c.form)
            (strict if c.strict else plain).add(
                c, v.passed, (time.perf_counter() - t0) * 1e3, p == 0
            )
            if p == 0 and c.form is not None and v.facts.get("form_ok") != c.form_ok:
                form_wrong.append(c.short)
    return plain, strict, form_wrong


def _run_math_verify(cases: list[Case], passes: int) -> Tally | None:
    loaded = _load_math_verify()
    if loaded is None:
        print("math_verify: not installed (pip install 'gymforge[bench]'); skipped\n")
        return None
    fn, version = loaded
    tally = Tally(f"math_verify {version}")
    for p in range(passes):
        for c in cases:
            if c.strict:
                continue
            t0 = time.perf_counter()
            try:
                ok = fn(c.response, c.gold)
            except Exception:
                ok = False
            tally.add(c, ok, (time.perf_counter() - t0) * 1e3, p == 0)
    return tally


def _pathological_table(mv_loaded: bool) -> None:
    print("\npathological inputs (expected: fail, quickly)")
    print(f"{'input':<26}{'gymforge':>26}{'math_verify':>28}")
    ver = MathVerifier(cache_gold=False)
    ctx = mp.get_context("fork")
    for name, resp, gold in _pathological():
        v = ver.verify(resp, gold)
        gf = f"{v.reason} {v.facts['latency_ms']:.0f} ms"
        if not mv_loaded:
            mvs = "skipped"
        else:
            q = ctx.Queue()
            t0 = time.perf_counter()
            proc = ctx.Process(target=_mv_child, args=(resp, gold, q))
            proc.start()
            proc.join(MV_KILL_S)
            if proc.is_alive():
                proc.kill()
                proc.join()
                mvs = f"killed after {MV_KILL_S:.0f} s"
            elif q.empty():
                mvs = f"died ({(time.perf_counter() - t0) * 1e3:.0f} ms)"
            else:
                ok, ms = q.get()
                mvs = f"{'PASS' if ok else 'fail'} {ms:.0f} ms"
        print(f"{name:<26}{gf:>26}{mvs:>28}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--passes", type=int, default=3)
    args = ap.parse_args()
    cases = load_cases()
    classes = Counter(c.cls for c in cases)
    print(f"{len(cases)} labelled cases x {args.passes} passes, {len(classes)} classes\n")
    plain, strict, form_wrong = _run_gymforge(cases, args.passes)
    mv = _run_math_verify(cases, args.passes)
    head = f"{'tool':<24}{'accuracy':>18}{'f.pass':>8}{'f.fail':>8}"
    print(head + f"{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}")
    for t in (plain, mv, strict):
        if t is not None:
            print(t.row())
    if mv is not None:
        r50 = pct(mv.latency, 0.5) / pct(plain.latency, 0.5)
        r99 = pct(mv.latency, 0.99) / pct(plain.latency, 0.99)
        print(f"{'ratio math_verify/gf':<58}{r50:>8.1f}x{r99:>8.1f}x")
    plain_rows = sum(1 for c in cases if c.contract is None)
    print(f"\non the {plain_rows} rows whose label needs no gymforge-specific rule:")
    for t in (plain, mv):
        if t is not None:
            print(f"  {t.name:<22}{t.plain_accuracy(cases):>18}")
    forms = sum(1 for c in cases if c.form is not None)
    print(f"\ngymforge form_ok right on {forms - len(form_wrong)}/{forms} rows with a form")
    print(f"\n{'class':<26}{'rows':>6}{'gymforge wrong':>16}{'math_verify wrong':>19}")
    for cls, n in sorted(classes.items()):
        gw = sum(c.cls == cls for t in (plain, strict) for c in t.false_pass + t.false_fail)
        mw = "-" if mv is None else str(sum(c.cls == cls for c in mv.false_pass + mv.false_fail))
        print(f"{cls:<26}{n:>6}{gw:>16}{mw:>19}")
    for t in (plain, strict, mv):
        if t is None:
            continue
        for kind, wrong in (("false passes", t.false_pass), ("false fails", t.false_fail)):
            if wrong:
                print(f"\n{t.name}: {len(wrong)} {kind}")
                for c in wrong:
                    print(f"  {c.short}")
    for line in form_wrong:
        print(f"  form_ok wrong: {line}")
    _pathological_table(mv is not None)
    print(f"\npool stats: {default_pool().stats}")


if __name__ == "__main__":
    main()
