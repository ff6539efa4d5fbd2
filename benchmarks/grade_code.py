"""Throughput of ``gymforge grade code`` on a batch of a few hundred answers, next to a plain
subprocess baseline measured in the same run.

- **grade**: ``gymforge grade code --answers A --out V`` as a real command (sandboxed judging
  through the env's own verifier: ``reset`` + ``step(Reply)`` per line). Start-up (interpreter,
  imports, sandbox workers) is excluded by also timing a 1-answer batch and taking the
  difference: checks/s = (N - 1) / (t_N - t_1).
- **plain subprocess**: the same answers, each checked by ``python3 -c <candidate + asserts>``
  (no isolation, the judge trusting the exit code: the dishonest baseline), ``workers`` at a time.

Answers: half the tasks' reference solutions, half wrong ones, over the three procedural
families (``--kind calls``, the function-call batch path) or over a HumanEval-format dataset
(``--kind humaneval``: ``check(candidate)`` in the judge, interactive session).

    .venv/bin/python benchmarks/grade_code.py [--n 300] [--workers 2] [--kind calls]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gymforge.envs.code.families import FAMILIES  # noqa: E402


def make_batch(n: int, kind: str, tmp: Path) -> tuple[list[dict], list[str], Path | None]:
    """(answer lines, plain-subprocess scripts, dataset path or None)."""
    answers, scripts = [], []
    dataset = None
    if kind == "humaneval":
        dataset = tmp / "tasks.jsonl"
        rows = []
        for i in range(n):
            rows.append(
                {
                    "task_id": f"HE/{i}",
                    "entry_point": "f",
                    "prompt": "def f(x, y):\n",
                    "test": "def check(candidate):\n"
                    + "".join(f"    assert candidate({a}, {i}) == {a * 3 + i}\n" for a in range(5)),
                }
            )
        dataset.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    for i in range(n):
        good = i % 2 == 0
        if kind == "humaneval":
            src = f"def f(x, y):\n    return x * 3 + y{'' if good else ' + 1'}\n"
            answers.append({"task_id": f"HE/{i}", "answer": f"```python\n{src}```"})
            checks = "".join(f"assert f({a}, {i}) == {a * 3 + i}\n" for a in range(5))
            scripts.append(src + checks)
            continue
        fam = FAMILIES[i % len(FAMILIES)]
        tid = f"{fam.name}/v{fam.version}/d{1 + i % 3}/s{i}"
        task = fam.resolve(tid)
        entry = task.truth["entry_point"]
        src = task.truth["reference"] if good else f"def {entry}(*args):\n    return 'wrong'\n"
        answers.append({"task_id": tid, "answer": f"```python\n{src}```"})
        checks = "".join(
            f"assert {entry}(*{t['args']!r}) == {t['expected']!r}\n" for t in task.truth["tests"]
        )
        scripts.append(src + checks)
    return answers, scripts, dataset


def run_grade(answers: list[dict], dataset: Path | None, tmp: Path, workers: int) -> float:
    ans, out = tmp / f"answers{len(answers)}.jsonl", tmp / f"verdicts{len(answers)}.jsonl"
    ans.write_text("\n".join(json.dumps(a) for a in answers) + "\n")
    cmd = [
        sys.executable,
        "-m",
        "gymforge.cli",
        "grade",
        "code",
        "--answers",
        str(ans),
        "--out",
        str(out),
        "--concurrency",
        str(4 * workers),
        "--json",
    ]
    if dataset is not None:
        cmd += ["--dataset", str(dataset)]
    env = {**os.environ, "GYMFORGE_SANDBOX_WORKERS": str(workers)}
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    dt = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"grade failed: {proc.stderr[-2000:]}")
    summary = json.loads(proc.stdout)
    expected = sum(1 for i in range(len(answers)) if i % 2 == 0)
    if summary["passed"] != expected or summary["errors"]:
        raise SystemExit(f"unexpected verdicts: {summary} (expected {expected} passed)")
    return dt


def run_plain(scripts: list[str], workers: int) -> tuple[float, int]:
    def one(src: str) -> bool:
        return (
            subprocess.run([sys.executable, "-I", "-S", "-c", src], capture_output=True).returncode
            == 0
        )

    t0 = time.perf_counter()
    with ThreadPoolExecutor(workers) as ex:
        passed = sum(ex.map(one, scripts))
    return time.perf_counter() - t0, passed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--kind", choices=("calls", "humaneval"), default="calls")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        answers, scripts, dataset = make_batch(a.n, a.kind, tmp)
        run_grade(answers[:1], dataset, tmp, a.workers)  # warm caches (imports, pyc)
        t1 = run_grade(answers[:1], dataset, tmp, a.workers)
        tn = run_grade(answers, dataset, tmp, a.workers)
        tp, passed = run_plain(scripts, a.workers)
    grade_rate = (a.n - 1) / max(1e-9, tn - t1)
    print(f"batch: {a.n} answers ({a.kind}), {a.workers} sandbox workers, {os.cpu_count()} cpus")
    print(
        f"gymforge grade code : {grade_rate:8.1f} checks/s  (total {tn:.2f} s, "
        f"start-up {t1:.2f} s excluded)"
    )
    print(
        f"plain subprocess    : {a.n / tp:8.1f} checks/s  (total {tp:.2f} s, {passed} passed, "
        "no isolation, trusts the exit code)"
    )
    print(f"ratio               : {grade_rate / (a.n / tp):8.2f}x")


if __name__ == "__main__":
    main()
