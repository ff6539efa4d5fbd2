"""Sandbox latency and throughput, all measured in the same run:

1. a plain ``python3 -c pass`` subprocess (no isolation; the baseline);
2. a one-shot ``bwrap ... python3 -c pass`` (isolation, paid per run);
3. a gymforge check of a HumanEval-format task (``{prompt, entry_point, test}`` with
   ``check(candidate)``) through ``CodeJudge.judge``, the path ``gymforge grade code`` and the
   ``code`` environment take: the candidate runs in the sandbox, the test code and every
   ``==`` run *here* on plain data, and the verdict is built. Its literal calls go as one
   batch job (see ``gymforge.verify.code.plan.plan_calls``).

The two sandbox primitives under it are measured too: a batch (``SandboxJob(calls=[...])``: one
round trip per check) and an interactive session (``backend.session``: one round trip per
call, what the judge falls back to when a test's calls are not literal). So is a run of a
cached compiled C++ program on stdin (``cpp``, when ``g++`` is installed): the artefact comes
from the host-side cache and is handed to the job as a file of its own directory (jobs never
see the cache itself).

Where a container engine is set up (``make containers``), the container backend
(``GYMFORGE_SANDBOX=docker``: the same zygotes in long-lived podman containers) is measured
beside the local one in the same interleaved loop: its gymforge check, its batch primitive
and its cached C++ run, plus a one-shot ``podman run --rm IMAGE python3 -c pass`` (what a
container per check would cost; fewer samples, it is slow).

It prints p50/p95 latency and checks/s for each, and checks/s with both workers busy.
Targets: gymforge check p50 <= 0.35x the plain subprocess, >= 300 checks/s on 2 cores; the
container backend's check p50 within 1.5x of the local backend's.

    .venv/bin/python benchmarks/sandbox.py [--n 300] [--workers 2] [--no-containers]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gymforge.sandbox import Call, CallStatus, Limits, SandboxJob, get_backend
from gymforge.sandbox.docker import DockerBackend, docker_available
from gymforge.sandbox.docker_engine import default_image, engine, engine_env
from gymforge.sandbox.local import default_python
from gymforge.verify.code import CodeJudge, JudgeConfig

CANDIDATE = """
from typing import List

def has_close_elements(numbers: List[float], threshold: float) -> bool:
    for idx, elem in enumerate(numbers):
        for idx2, elem2 in enumerate(numbers):
            if idx != idx2 and abs(elem - elem2) < threshold:
                return True
    return False
"""

# HumanEval/0's test, verbatim in spirit: it runs in the judge (this process).
CASES: list[tuple[tuple[Any, ...], Any]] = [
    (([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3), True),
    (([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05), False),
    (([1.0, 2.0, 5.9, 4.0, 5.0], 0.95), True),
    (([1.0, 2.0, 5.9, 4.0, 5.0], 0.8), False),
    (([1.0, 2.0, 3.0, 4.0, 5.0, 2.0], 0.1), True),
    (([1.1, 2.2, 3.1, 4.1, 5.1], 1.0), True),
    (([1.1, 2.2, 3.1, 4.1, 5.1], 0.5), False),
]


def check(candidate: Callable[..., Any]) -> None:
    for args, expected in CASES:
        assert candidate(*args) == expected


LIMITS = Limits(wall_time=10, call_timeout=2)
HE_TRUTH = {
    "kind": "humaneval",
    "entry_point": "has_close_elements",
    "prompt": "",
    "test": "def check(candidate):\n"
    + "".join(f"    assert candidate{args!r} == {exp!r}\n" for args, exp in CASES),
}


def gymforge_check_judge(judge: Any) -> bool:
    """One verdict the way the code environment and ``gymforge grade code`` reach it."""
    v = judge.judge(HE_TRUTH, f"```python\n{CANDIDATE}```")
    return bool(v.passed and v.facts["tests_run"] == len(CASES))


def gymforge_check_session(backend: Any) -> bool:
    """One verdict: load once, call through a proxy, compare here."""
    with backend.session(SandboxJob(source=CANDIDATE, limits=LIMITS)) as s:
        if not s.load.ok:
            return False
        try:
            check(s.function("has_close_elements"))
            passed = True
        except Exception:
            passed = False
    return passed and s.result is not None and s.result.status == "ok"


BATCH_JOB = SandboxJob(
    source=CANDIDATE,
    limits=LIMITS,
    calls=[Call(name="has_close_elements", args=a) for a, _ in CASES],
)


def gymforge_check_batch(backend: Any) -> bool:
    r = backend.run(BATCH_JOB)
    calls = r.calls or []
    return (
        r.status == "ok"
        and len(calls) == len(CASES)
        and all(
            c.status is CallStatus.OK and c.value == exp
            for c, (_, exp) in zip(calls, CASES, strict=True)
        )
    )


CPP = r"""
#include <iostream>
int main() { long long a, b; std::cin >> a >> b; std::cout << a * 7 + b << "\n"; }
"""
CPP_JOB = SandboxJob(language="cpp", source=CPP, stdin="3 4\n", limits=LIMITS)


def cached_cpp_run(backend: Any) -> bool:
    """One run of a compiled program that is already in the artefact cache."""
    r = backend.run(CPP_JOB)
    return r.status == "ok" and r.stdout == "25\n" and r.compile_cached is True


def measure(fns: dict[str, Callable[[], Any]], n: int, warmup: int = 5) -> dict[str, list[float]]:
    """Latency of each kind, interleaved round-robin so that every kind sees the same machine
    load (this benchmark usually shares its 2 cores with other work)."""
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    out: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(n):
        for k, fn in fns.items():
            t = time.perf_counter()
            ok = fn()
            out[k].append(time.perf_counter() - t)
            if ok is False:
                raise SystemExit("a check failed: the benchmark is not measuring a pass")
    return out


def throughput(
    fns: dict[str, Callable[[], Any]], n: int, threads: int, rounds: int = 4
) -> dict[str, float]:
    """Items/s of each kind with ``threads`` callers, in alternating chunks (same reason)."""
    done = dict.fromkeys(fns, 0)
    spent = dict.fromkeys(fns, 0.0)
    for _ in range(rounds):
        for k, fn in fns.items():
            left = [max(1, n // rounds)]
            lock = threading.Lock()

            def loop(
                fn: Callable[[], Any] = fn, left: list[int] = left, lock: threading.Lock = lock
            ) -> None:
                while True:
                    with lock:
                        if left[0] <= 0:
                            return
                        left[0] -= 1
                    if fn() is False:
                        raise SystemExit("a check failed")

            ts = [threading.Thread(target=loop) for _ in range(threads)]
            t = time.perf_counter()
            for th in ts:
                th.start()
            for th in ts:
                th.join()
            spent[k] += time.perf_counter() - t
            done[k] += max(1, n // rounds)
    return {k: done[k] / spent[k] for k in fns}


def _tree(pid: int) -> list[int]:
    out = [pid]
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            for c in Path(f"/proc/{pid}/task/{t}/children").read_text().split():
                out += _tree(int(c))
    except OSError:
        pass
    return out


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # it has just exited
        return b""


def sandbox_cpu(backend: Any) -> float:
    """CPU seconds used so far by the workers' long-lived processes and every job they reaped
    (``cutime``/``cstime`` of the zygotes; the fork template's own and its middle processes',
    where there is one); pre-forked children not yet reaped are excluded."""
    total = 0
    tick = os.sysconf("SC_CLK_TCK")
    for w in backend.workers:
        if w.proc is None:
            continue
        tree = _tree(w.proc.pid)
        head = default_python().encode() + b"\0-I\0"
        cmd = {p: _cmdline(p) for p in tree}
        # the zygote (the first of these) and its fork template, if any, count; not-yet-used
        # pre-forked children (same command line) do not
        zyg = [p for p in tree if cmd[p].startswith(head) and b"template.py" not in cmd[p]]
        tpl = [p for p in tree if cmd[p].startswith(head) and b"template.py" in cmd[p]]
        for pid in [p for p in tree if p not in zyg and p not in tpl] + zyg[:1] + tpl[:1]:
            try:
                f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += sum(int(x) for x in f[11:15])
    return total / tick


def cpu_per_check(backend: Any, fn: Callable[[], Any], n: int) -> tuple[float, float]:
    """(host, sandbox) CPU seconds per check, run sequentially."""
    h0, s0 = time.process_time(), sandbox_cpu(backend)
    for _ in range(n):
        fn()
    return (time.process_time() - h0) / n, (sandbox_cpu(backend) - s0) / n


def unit(kind: str) -> str:
    return "run" if kind == "cpp" else "check"


def row(name: str, xs: list[float]) -> dict[str, float]:
    xs = sorted(xs)
    p50 = statistics.median(xs)
    p95 = xs[min(len(xs) - 1, int(0.95 * len(xs)))]
    print(
        f"{name:<44} p50 {p50 * 1e3:7.2f} ms   p95 {p95 * 1e3:7.2f} ms   "
        f"{1 / statistics.mean(xs):8.1f} /s (sequential)"
    )
    return {"p50": p50, "p95": p95}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--no-containers", action="store_true", help="Skip the container backend.")
    a = ap.parse_args()
    py = default_python()
    bwrap = shutil.which("bwrap")
    plain = [py, "-c", "pass"]
    oneshot = [
        bwrap or "bwrap",
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--ro-bind",
        "/",
        "/",
        "--tmpfs",
        "/tmp",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--cap-drop",
        "ALL",
        py,
        "-c",
        "pass",
    ]
    print(f"python: {py}; n={a.n}; workers={a.workers}; kinds measured interleaved")
    names = {
        "plain": "plain `python3 -c pass` subprocess",
        "bwrap": "one-shot `bwrap ... python3 -c pass`",
        "judge": "gymforge check (HumanEval format, verdict)",
        "session": "  primitive: session, 7 calls",
        "batch": "  primitive: batch of 7 calls",
        "cpp": "cached C++ program run on stdin",
        "c-judge": "container backend: gymforge check",
        "c-batch": "  container primitive: batch of 7 calls",
        "c-cpp": "container backend: cached C++ run on stdin",
    }
    containers, why = (False, "--no-containers") if a.no_containers else docker_available()
    if not containers:
        print(f"container backend not measured: {why}")
    docker = DockerBackend(a.workers, languages=("cpp",)) if containers else None
    with get_backend("local", workers=a.workers) as backend:
        judge = CodeJudge(backend, JudgeConfig(limits=LIMITS))
        fns: dict[str, Callable[[], Any]] = {
            "plain": lambda: subprocess.run(plain, check=True),
            "bwrap": lambda: subprocess.run(oneshot, check=True),
            "judge": lambda: gymforge_check_judge(judge),
            "session": lambda: gymforge_check_session(backend),
            "batch": lambda: gymforge_check_batch(backend),
            "cpp": lambda: cached_cpp_run(backend),
        }
        if docker is not None:
            cjudge = CodeJudge(docker, JudgeConfig(limits=LIMITS))
            fns["c-judge"] = lambda: gymforge_check_judge(cjudge)
            fns["c-batch"] = lambda: gymforge_check_batch(docker)
            docker.run(CPP_JOB)
            fns["c-cpp"] = lambda: cached_cpp_run(docker)
        if not bwrap:
            del fns["bwrap"]
        if shutil.which("g++"):
            backend.run(CPP_JOB)  # compiled once: every measured run is a cache hit
        else:
            del fns["cpp"]
        lat = measure(fns, a.n)
        res = {k: row(names[k], v) for k, v in lat.items()}
        tp = throughput(fns, a.n * 2, a.workers)
        cpu = {
            k: cpu_per_check(backend, lambda f=f: f(backend), a.n)  # type: ignore[misc]
            for k, f in (("session", gymforge_check_session), ("batch", gymforge_check_batch))
        }
        cpu["judge"] = cpu_per_check(backend, lambda: gymforge_check_judge(judge), a.n)
        if "cpp" in fns:
            cpu["cpp"] = cpu_per_check(backend, lambda: cached_cpp_run(backend), a.n)
        if docker is not None:
            one = [engine().cli, "run", "--rm", "--network", "none", default_image()]
            one += ["python3", "-c", "pass"]
            env = engine_env()
            res["c-oneshot"] = row(
                "one-shot `podman run --rm IMAGE python3 -c pass`",
                measure({"o": lambda: subprocess.run(one, check=True, env=env)}, 20, 2)["o"],
            )
            docker.close()
    print(
        f"\nwith {a.workers} callers (both workers busy): "
        + ", ".join(f"{k} {v:.1f}/s" for k, v in tp.items())
    )
    base = res["plain"]["p50"]
    print(
        f"gymforge check p50 / plain p50 = {res['judge']['p50'] / base:.2f} (target <= 0.35); "
        f"primitives: batch {res['batch']['p50'] / base:.2f}, "
        f"session {res['session']['p50'] / base:.2f}"
    )
    print(
        f"gymforge checks/s with both workers busy = {tp['judge']:.0f} (target >= 300); "
        f"primitives: batch {tp['batch']:.0f}, session {tp['session']:.0f}"
    )
    for k, (host, sb) in cpu.items():
        print(
            f"CPU per {k} {unit(k)}: host {host * 1e3:.2f} ms + sandbox {sb * 1e3:.2f} ms "
            f"-> at most {2 / (host + sb):.0f} {unit(k)}s/s on 2 otherwise idle cores"
        )
    if "cpp" in res:
        print(
            f"cached C++ run p50 / plain p50 = {res['cpp']['p50'] / base:.2f}; "
            f"{tp['cpp']:.0f} runs/s with both workers busy"
        )
    if "c-judge" in res:
        ratios = {
            "check": res["c-judge"]["p50"] / res["judge"]["p50"],
            "batch": res["c-batch"]["p50"] / res["batch"]["p50"],
        }
        if "cpp" in res:
            ratios["cached C++ run"] = res["c-cpp"]["p50"] / res["cpp"]["p50"]
        print(
            "container p50 / local p50: "
            + ", ".join(f"{k} {v:.2f}" for k, v in ratios.items())
            + " (target: check <= 1.5)"
        )
        print(
            f"container checks/s with both workers busy = {tp['c-judge']:.0f} (local "
            f"{tp['judge']:.0f}); a one-shot container costs "
            f"{res['c-oneshot']['p50'] / res['c-judge']['p50']:.0f}x a container check"
        )
    print(f"load average at the end: {os.getloadavg()[0]:.2f} (1 min; 2 cores)")


if __name__ == "__main__":
    main()
