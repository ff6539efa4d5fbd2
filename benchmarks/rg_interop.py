"""Every reasoning-gym dataset through the adapter's red team: which generic attacks its own
scorer pays, and the verdict of the verifier the adapter judges it with.

For each dataset (in a child process of its own, with a time limit): build the environment
class (generation and the oracle probe: does the dataset's verifier give its stored answers
full marks?), then run QA's ``verifier_redteam`` check (``--episodes``) twice when gymforge has
a strict verifier for it (with reasoning-gym's own scorer, and with the strict one), once
otherwise. Results merge into ``gymforge/registry/reasoning_gym_findings.json`` (``gymforge
list`` marks datasets from it) and the table between the ``rg-table`` markers of
``docs/interop.md`` is rewritten from that file, so a run over a subset updates only those
rows.

Run: python benchmarks/rg_interop.py [--datasets a,b,c | --all] [--skip-done]
     [--episodes 18] [--timeout 600]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FINDINGS = ROOT / "gymforge" / "registry" / "reasoning_gym_findings.json"
DOC = ROOT / "docs" / "interop.md"
START, END = "<!-- rg-table:start -->", "<!-- rg-table:end -->"


def redteam(cls: Any, episodes: int) -> dict[str, Any]:
    from gymforge.qa import QATarget, run_qa
    from gymforge.qa.checks.common import QAOptions

    target = QATarget.from_factory(lambda: cls(), ref=cls.spec.id)
    (check,) = run_qa(target, QAOptions(episodes=episodes), only=["verifier_redteam"]).checks
    return {
        "passed": check.passed,
        "applicable": check.applicable,
        "pays": [name.removeprefix("env.") for name in check.metrics.get("breached", [])],
        "details": check.details[:300],
    }


def one(dataset: str, episodes: int) -> dict[str, Any]:
    """The findings on ``dataset`` (run in a child process)."""
    from gymforge.envs.reasoning_gym import env_class
    from gymforge.envs.reasoning_gym.env import oracle_gap
    from gymforge.envs.reasoning_gym.strict import STRICT, VERIFIER_NAMES

    t0 = time.perf_counter()
    raw = env_class(dataset, strict=False)
    out: dict[str, Any] = {"dataset": dataset, "build_s": round(time.perf_counter() - t0, 1)}
    gap = raw.qa.not_applicable.get("verifier_redteam")
    out["oracle"] = gap is None
    if gap is not None:
        out.update(verdict="not tested", note=gap.removeprefix("no oracle: ")[:200])
        return out
    refused = oracle_gap(raw.family, dataset in STRICT)[1]
    own = redteam(raw, episodes)
    out["scorer_pays"] = own["pays"]
    adapter = own
    if dataset in STRICT:
        adapter = redteam(env_class(dataset), episodes)
        out["strict"] = VERIFIER_NAMES[dataset]
    out["adapter_pays"] = adapter["pays"]
    out["verdict"] = "passed" if adapter["passed"] and refused is None else "failed"
    if refused is not None:  # QA's scripted_baselines fails on it
        out["note"] = f"stored answers refused: {refused}"
    elif not adapter["passed"]:
        out["note"] = adapter["details"]
    out["seconds"] = round(time.perf_counter() - t0, 1)
    return out


def child(dataset: str, episodes: int, timeout: float) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--one", dataset, "--episodes", str(episodes)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT, check=False
        )
    except subprocess.TimeoutExpired:
        return {"dataset": dataset, "verdict": "not tested", "note": f"over {timeout:.0f} s"}
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"dataset": dataset, "verdict": "error", "note": tail[:200]}
    found: dict[str, Any] = json.loads(lines[-1])
    found.setdefault("seconds", round(time.perf_counter() - t0, 1))
    return found


def table(findings: dict[str, Any]) -> str:
    meta = findings["run"]
    rows = [
        f"Produced by `python benchmarks/rg_interop.py` (reasoning-gym {meta['reasoning_gym']}, "
        f"QA `verifier_redteam` with `--episodes {meta['episodes']}`), last run "
        f"{meta['when']} on {meta['machine']}. {meta['ran']} of {meta['total']} datasets "
        "have been run; the others say `not run`.",
        "",
        "| dataset | adapter's verdict | attacks reasoning-gym's own scorer pays | note |",
        "|---|---|---|---|",
    ]
    for name in meta["datasets"]:
        f = findings["datasets"].get(name)
        if f is None:
            rows.append(f"| `{name}` | not run | | |")
            continue
        verdict = f["verdict"]
        if f.get("strict"):
            verdict += " (strict verifier)"
        pays = ", ".join(f"`{a}`" for a in f.get("scorer_pays", [])) or (
            "none" if f.get("oracle") and f["verdict"] != "error" else "-"
        )
        note = str(f.get("note", "")).replace("|", "/").replace("\n", " ")
        rows.append(f"| `{name}` | {verdict} | {pays} | {note} |")
    return "\n".join(rows)


def write(findings: dict[str, Any]) -> None:
    FINDINGS.write_text(json.dumps(findings, indent=1, sort_keys=True) + "\n")
    text = DOC.read_text()
    if START in text and END in text:
        head, rest = text.split(START, 1)
        _, tail = rest.split(END, 1)
        DOC.write_text(f"{head}{START}\n{table(findings)}\n{END}{tail}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default="")
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--episodes", type=int, default=18)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--skip-done", action="store_true", help="skip datasets already in the file")
    ap.add_argument("--one", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.episodes)))
        return
    from importlib.metadata import version

    from reasoning_gym.factory import DATASETS

    names = sorted(DATASETS) if args.all else [n for n in args.datasets.split(",") if n]
    findings: dict[str, Any] = {"datasets": {}}
    if FINDINGS.exists():
        findings = json.loads(FINDINGS.read_text())
    for name in names:
        if args.skip_done and name in findings["datasets"]:
            continue
        found = child(name, args.episodes, args.timeout)
        print(json.dumps(found), flush=True)
        findings["datasets"][name] = found
        findings["run"] = {
            "reasoning_gym": version("reasoning-gym"),
            "episodes": args.episodes,
            "when": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs (shared, loaded)",
            "datasets": sorted(DATASETS),
            "total": len(DATASETS),
            "ran": len(findings["datasets"]),
        }
        write(findings)


if __name__ == "__main__":
    main()
