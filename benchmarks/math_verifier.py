"""Math verifier: latency and accuracy of gymforge's ``MathVerifier`` next to ``math_verify``.

Claim: on ordinary cases gymforge's p50 is no slower than math_verify's and its p99 is at most
50 ms; on pathological inputs every verdict comes back within the 1 s timeout (2 s bound).

Method: ~200 labelled (response, gold, expected) cases over integers, fractions, decimals,
expressions, sets, intervals, tuples, matrices, equations, units, text answers, hedges,
false equations, reasoning-block tricks and code injection. Both tools see the same
responses. Labels follow gymforge's contract (issue 4): e.g. ``\\boxed{5=2}`` for gold 2 is
wrong, a box inside ``<think>`` does not count, 1.57 is wrong for pi/2.

- gymforge: ``MathVerifier().verify(response, gold)`` called sequentially (no queueing), on
  a warmed pool, with the workers' gold cache cleared before each call (cold golds).
  Latency is wall-clock per call: extraction, pipe round trip and evaluation.
- math_verify (bench-only dependency, ``pip install math-verify``; skipped with a message if
  missing): ``verify(parse(f"\\\\boxed{{{gold}}}"), parse(response))`` in this process.
- Pathological inputs (power towers, huge factorials, a million digits, 5000 nested
  parentheses, a 1000-term sum) are timed separately. math_verify runs each of them in a
  forked child killed after ``MV_KILL_S`` seconds, because its own timeout (``signal.alarm``)
  does not stop C-level big-integer work.

Run: python benchmarks/math_verifier.py [--passes N]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import logging
import multiprocessing as mp
import statistics
import time
from collections.abc import Callable

from gymforge.verify.math import MathVerifier, default_pool

MV_KILL_S = 10.0
Case = tuple[str, str, bool, str]  # response, gold, expected, category


def box(s: str) -> str:
    return f"We compute carefully. The answer is $\\boxed{{{s}}}$."


# One case per line: category, + (must pass) or - (must fail), the boxed answer, " ¦ ", the
# gold. Extraction cases give the whole response instead of the boxed answer.
_TABLE = r"""
integer + 42 ¦ 42
integer + -7 ¦ -7
integer + 5.0 ¦ 5
integer + x = 5 ¦ 5
integer + 1,000 ¦ 1000
integer + 1{,}000 ¦ 1000
integer + 043 ¦ 43
integer - 43 ¦ 42
integer - -7 ¦ 7
integer - 5=2 ¦ 2
integer + 3=3 ¦ 3
integer - x=3=4 ¦ 4
integer + k = 12 ¦ 12
integer + \text{12} ¦ 12
integer - 12345 ¦ 12354
integer + 2^{10} ¦ 1024
integer - 1023 ¦ 1024
integer + 5! ¦ 120
integer - 0 ¦ 1
integer + \dbinom{6}{2} ¦ 15
fraction + \frac{1}{2} ¦ 0.5
fraction + 0.5 ¦ \frac12
fraction + \dfrac{3}{4} ¦ \frac{6}{8}
fraction + 2\frac{1}{2} ¦ \frac{5}{2}
fraction + 0.\overline{3} ¦ \frac{1}{3}
fraction - 0.333 ¦ \frac13
fraction - 0.3333333333 ¦ \frac13
fraction - \frac{1}{2^{98}} ¦ \frac{1}{2^{99}}
fraction + 2^{-99} ¦ \frac{1}{2^{99}}
fraction - 10^{-7} ¦ 0
fraction - 1e-7 ¦ 0
fraction - 42.000042 ¦ 42
fraction + \frac{-3}{4} ¦ -\frac34
fraction + -0.75 ¦ -\frac{3}{4}
fraction - \frac{3}{4} ¦ \frac{4}{3}
fraction + \tfrac{7}{2} ¦ 3.5
fraction + 3.50 ¦ \frac72
fraction + \frac{14}{4} ¦ \frac{7}{2}
fraction + 7/2 ¦ \frac{7}{2}
fraction - \frac{7}{3} ¦ 2.33
decimal + 1.5707963267948966 ¦ \frac{\pi}{2}
decimal - 1.57 ¦ \frac{\pi}{2}
decimal - 3.14159 ¦ \pi
decimal + 3.141592653589793 ¦ \pi
decimal + 1.4142135623730951 ¦ \sqrt{2}
decimal - 1.414 ¦ \sqrt2
decimal + 2.718281828459045 ¦ e
decimal + 0.1 ¦ 0.1
decimal + 0.10 ¦ 0.1
decimal - 0.1000001 ¦ 0.1
decimal + 1.5e3 ¦ 1500
decimal + 1.5\times 10^{3} ¦ 1500
decimal + 3\cdot 10^{-3} ¦ 0.003
decimal + 12.5\% ¦ 12.5
decimal - 0.125 ¦ 12.5
decimal + 2.2360679774997896 ¦ \sqrt{5}
expression + 2\sqrt{2} ¦ \sqrt{8}
expression + \frac{\sqrt{2}}{2} ¦ \frac{1}{\sqrt{2}}
expression + x^2+2x+1 ¦ (x+1)^2
expression + (x-1)(x+1) ¦ x^2-1
expression - x^2+1 ¦ (x+1)^2
expression - X+1 ¦ x+1
expression - 4\sqrt(2) ¦ 4
expression + 4\sqrt{2} ¦ \sqrt{32}
expression - \frac{\pi}{3} ¦ 60
expression + e^{i\pi} ¦ -1
expression + \sin^2 x + \cos^2 x ¦ 1
expression + \frac{x^2-1}{x-1} ¦ x+1
expression + 3+4i ¦ 4i+3
expression - 3-4i ¦ 3+4i
expression + \frac{1+\sqrt{5}}{2} ¦ \frac{\sqrt5+1}{2}
expression - \frac{1-\sqrt{5}}{2} ¦ \frac{1+\sqrt5}{2}
expression + \log_2 8 ¦ 3
expression + \ln(e^3) ¦ 3
expression + 2\pi r ¦ 2r\pi
expression - \pi r^2 ¦ 2\pi r
expression + \frac{n(n+1)}{2} ¦ \frac{n^2+n}{2}
expression + ab ¦ ba
expression - a+b ¦ a-b
expression + \sqrt[3]{27} ¦ 3
expression + \alpha+\beta ¦ \beta+\alpha
expression + x_1+x_2 ¦ x_2+x_1
expression - \frac{a}{b} ¦ \frac{b}{a}
expression + \tan\frac{\pi}{4} ¦ 1
expression - 2^x ¦ x^2
expression + \cos(\pi) ¦ -1
set + \{1,2,3\} ¦ \{3,2,1\}
set - \{1,2\} ¦ \{1,2,3\}
set + 1, 2, 3 ¦ \{1,2,3\}
set - (1,2) ¦ \{1,2\}
set + \{-2,2\} ¦ \pm 2
set + x=1 \text{ or } x=2 ¦ \{1,2\}
set + x \in \{1, 2\} ¦ \{1,2\}
set + \{\frac12, 1\} ¦ \{1, 0.5\}
set - \{1\} ¦ \{1,2\}
set + \emptyset ¦ \varnothing
set + 2, -2 ¦ -2, 2
set - 2, 3 ¦ -2, 2
interval + [1,2) ¦ [1,2)
interval - (1,2] ¦ (1,2)
interval - [1,2] ¦ (1,2)
interval + (-\infty, 1) \cup (2, \infty) ¦ (-\infty,1)\cup(2,\infty)
interval + (2,\infty) ¦ x>2
interval + x \ge 2 ¦ [2,\infty)
interval + 1 < x \le 3 ¦ (1,3]
interval + [1,2]\cup[2,3] ¦ [1,3]
interval - (1,2)\cup(2,3) ¦ (1,3)
interval + (-\infty, \infty) ¦ \mathbb{R}
interval + x \in [0, 1] ¦ [0,1]
interval - (0, 1) ¦ [0, 1]
interval + \left[ \frac{1}{2}, 3 \right) ¦ [0.5, 3)
interval - (-\infty,0] ¦ (-\infty,0)
tuple + (1,2) ¦ (1,2)
tuple - (2,1) ¦ (1,2)
tuple + (1, 2, 3) ¦ (1,2,3)
tuple - (1, 3, 2) ¦ (1,2,3)
tuple + x = 1, y = 2 ¦ (1,2)
tuple + \left(\frac12, 3\right) ¦ (0.5, 3)
tuple + (\sqrt2, \pi) ¦ (\sqrt{2}, \pi)
tuple - (1, 2) ¦ (1, 2, 3)
tuple + \langle 1, 2 \rangle ¦ \langle 1,2\rangle
matrix + \begin{pmatrix}1&2\\3&4\end{pmatrix} ¦ \begin{pmatrix}1&2\\3&4\end{pmatrix}
matrix + \begin{bmatrix}1&2\\3&4\end{bmatrix} ¦ \begin{pmatrix}1&2\\3&4\end{pmatrix}
matrix - \begin{pmatrix}1&2\\3&5\end{pmatrix} ¦ \begin{pmatrix}1&2\\3&4\end{pmatrix}
matrix - \begin{pmatrix}1&3\\2&4\end{pmatrix} ¦ \begin{pmatrix}1&2\\3&4\end{pmatrix}
matrix + \begin{pmatrix}\frac12\\2\end{pmatrix} ¦ \begin{pmatrix}0.5\\2\end{pmatrix}
matrix + \begin{pmatrix}1\\2\end{pmatrix} ¦ (1,2)
equation + y = 2x + 1 ¦ y = 1 + 2x
equation + 2y = 4x + 2 ¦ y = 2x + 1
equation - y = 2x + 2 ¦ y = 2x + 1
equation + x^2 + y^2 = 1 ¦ y^2 + x^2 = 1
equation + 2x - y + 1 = 0 ¦ y = 2x+1
equation - x = 3 ¦ y = 3
equation - y = x^2 ¦ y = x^3
units - 5\text{ km} ¦ 5\text{ m}
units + 5\text{ m} ¦ 5\text{ m}
units - 5\text{ m} ¦ 5
units + 5 ¦ 5\text{ m}
units + 90^\circ ¦ 90
units + 90^{\circ} ¦ 90^\circ
units + \$12 ¦ 12
units - 12\text{ dollars} ¦ 12
units + 7 \text{ cm}^2 ¦ 7\text{ cm}^2
units - 7 \text{ cm} ¦ 7\text{ cm}^2
units + 5\text{ meters} ¦ 5\text{ m}
units - 60^\circ ¦ \frac{\pi}{3}
text + \text{(B)} ¦ B
text + \textbf{(C)} ¦ \text{(C)}
text - D ¦ \text{(C)}
text + \text{Monday} ¦ \text{Monday}
text - \text{Tuesday} ¦ \text{Monday}
infinity + \infty ¦ \infty
infinity + +\infty ¦ \infty
infinity - -\infty ¦ \infty
infinity - \infty ¦ 10^{100}
hedge - 3 \text{ or } 5 ¦ 3
hedge - 3 or 5 ¦ 3
hedge - \pm 3 ¦ 3
hedge - 3, 5 ¦ 3
hedge - 3; 5 ¦ 3
hedge - x = 3 \text{ or } x = 5 ¦ 5
hedge + 3, 3 ¦ 3
extraction - \boxed{3} or \boxed{5} ¦ 3
extraction + So \boxed{3}. Checking again: \boxed{3}. ¦ 3
extraction + First \boxed{x=3}, i.e. \boxed{3} ¦ 3
extraction - <think>it is \boxed{3}</think>The answer is \boxed{4} ¦ 3
extraction + <think>it is \boxed{3}</think>The answer is \boxed{3} ¦ 3
extraction + <think>try \boxed{4}</think>\boxed{3} ¦ 3
extraction - <think>the answer is \boxed{3} but I keep thinking ¦ 3
extraction - I think it's \boxed{3}</think> so \boxed{5} ¦ 3
extraction - The answer is 3. ¦ 3
extraction + \boxed{\boxed{3}} ¦ 3
extraction + \boxed{\frac{1}{2}} ¦ \frac12
extraction + \fbox{7} ¦ 7
extraction + \boxed 7 ¦ 7
extraction - \boxed{3 ¦ 3
extraction - \boxed{} ¦ 3
extraction + \boxed{\{1, 2\}} ¦ \{1,2\}
injection - __import__('os').system('exit 3') ¦ 3
injection - ().__class__.__base__.__subclasses__() ¦ 3
injection - eval("3") ¦ 3
injection - \input{/etc/passwd} ¦ 3
"""


def _cases() -> list[Case]:
    out: list[Case] = []
    for line in _TABLE.strip().splitlines():
        cat, sign, rest = line.split(" ", 2)
        answer, gold = rest.split(" ¦ ")
        response = answer if cat == "extraction" else box(answer)
        out.append((response, gold, sign == "+", cat))
    s1000 = "+".join(str(i) for i in range(1, 1001))
    long = [(s1000, "1", False), (s1000, "500500", True), ("+".join(["1"] * 300), "300", True)]
    out += [(box(a), g, e, "long") for a, g, e in long]
    return out


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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--passes", type=int, default=3)
    args = ap.parse_args()
    cases = _cases()
    ver = MathVerifier(cache_gold=False)
    pool = default_pool().start()
    for i in range(50):  # warm the pool and the workers on unrelated cases
        ver.verify(box(f"\\frac{{{i}}}{{3}}"), f"{i}/3")
    gf_lat: list[float] = []
    gf_wrong: list[Case] = []
    for p in range(args.passes):
        for case in cases:
            t0 = time.perf_counter()
            v = ver.verify(case[0], case[1])
            gf_lat.append((time.perf_counter() - t0) * 1e3)
            if p == 0 and v.passed != case[2]:
                gf_wrong.append(case)
    n = len(cases)
    print(f"{n} cases x {args.passes} passes ({len({c[3] for c in cases})} categories)\n")
    rows = [("gymforge MathVerifier", gf_lat, n - len(gf_wrong))]
    mv = _load_math_verify()
    mv_wrong: list[Case] = []
    if mv is None:
        print(
            "math_verify: not installed (bench-only dependency: pip install math-verify); skipped\n"
        )
    else:
        fn, mv_version = mv
        mv_lat: list[float] = []
        for p in range(args.passes):
            for case in cases:
                t0 = time.perf_counter()
                try:
                    ok = fn(case[0], case[1])
                except Exception:
                    ok = False
                mv_lat.append((time.perf_counter() - t0) * 1e3)
                if p == 0 and ok != case[2]:
                    mv_wrong.append(case)
        rows.append((f"math_verify {mv_version}", mv_lat, n - len(mv_wrong)))
    print(f"{'tool':<24}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}{'mean ms':>9}{'accuracy':>14}")
    for name, lat, right in rows:
        print(
            f"{name:<24}{pct(lat, 0.5):>9.2f}{pct(lat, 0.99):>9.2f}{max(lat):>9.1f}"
            f"{statistics.fmean(lat):>9.2f}{f'{right}/{n} ({right / n:.1%})':>14}"
        )
    if len(rows) == 2:
        (_, a, _), (_, b, _) = rows
        r50, r99 = pct(b, 0.5) / pct(a, 0.5), pct(b, 0.99) / pct(a, 0.99)
        print(f"{'ratio math_verify/gf':<24}{r50:>8.1f}x{r99:>8.1f}x")
    for name, wrong in (("gymforge", gf_wrong), ("math_verify", mv_wrong)):
        if wrong:
            print(f"\n{name} got {len(wrong)} wrong:")
            for resp, gold, exp, cat in wrong:
                short = resp if len(resp) < 70 else resp[:67] + "..."
                print(f"  [{cat}] expected {'pass' if exp else 'fail'}: {short!r} vs gold {gold!r}")
    print("\npathological inputs (expected: fail, quickly)")
    print(f"{'input':<26}{'gymforge':>26}{'math_verify':>28}")
    ctx = mp.get_context("fork")
    for name, resp, gold in _pathological():
        v = ver.verify(resp, gold)
        gf = f"{v.reason} {v.facts['latency_ms']:.0f} ms"
        if mv is None:
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
    print(f"\npool stats: {pool.stats}")


if __name__ == "__main__":
    main()
