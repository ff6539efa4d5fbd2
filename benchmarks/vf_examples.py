"""Verifiers 0.3.1's example environments through ``gymforge qa``: one verdict per environment.

The Verifiers 0.3.1 wheel ships no ``environments/`` examples (its examples load datasets
from the Hugging Face hub); what it ships and can run offline here are its integrations
(``ReasoningGymEnv``, the experimental ``GymEnv``). The others are small faithful copies of
its documented patterns, in ``tests/interop/vf_ex_*.py``, over offline rows. Each runs as
``gymforge qa verifiers:MODULE --json`` in a child process (``--jobs`` at once); the table
between the ``vf-examples`` markers of ``docs/interop.md`` is rewritten with ``--write``.

Run: python benchmarks/vf_examples.py [--episodes 6] [--jobs 3] [--timeout 2400] [--write]
     [--only vf_ex_xml_think,...]
(with the Verifiers extra: ``.venv-interop/bin/python``, or ``make`` target ``test-interop``'s
venv)
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "interop.md"
START, END = "<!-- vf-examples:start -->", "<!-- vf-examples:end -->"

EXAMPLES: tuple[tuple[str, str], ...] = (
    ("vf_ex_xml_think", '`SingleTurnEnv`, `XMLParser(["think", "answer"])`, format reward 0.2'),
    ("vf_ex_xml_alternatives", '`SingleTurnEnv`, `XMLParser(["reasoning", ("code", "answer")])`'),
    ("vf_ex_think_boxed", "`SingleTurnEnv`, `ThinkParser(extract_fn=extract_boxed_answer)`"),
    ("vf_ex_default_parser", "`SingleTurnEnv`, default `Parser`"),
    ("vf_ex_lenient", '`SingleTurnEnv`, `XMLParser(["think", "answer"])`, `answer in parsed`'),
    ("vf_eval_rubric", "`SingleTurnEnv`, default `Parser`, a rubric that `eval`s the reply"),
    ("vf_leg_counting", 'shipped `ReasoningGymEnv` (leg_counting), `XMLParser(["answer"])`'),
    ("vf_frozen_lake", "shipped experimental `GymEnv` (`MultiTurnEnv`) over FrozenLake"),
    ("vf_ex_tool_env", "`ToolEnv` (a Python function as a tool)"),
)


def run_one(module: str, episodes: int, timeout: float) -> dict[str, Any]:
    """``gymforge qa verifiers:tests.interop.MODULE --json``'s outcome, summarised."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    ref = f"verifiers:tests.interop.{module}"
    cmd = [sys.executable, "-m", "gymforge.cli", "qa", ref, "--json", "--episodes", str(episodes)]
    try:
        proc = subprocess.run(
            cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return {"module": module, "verdict": f"not finished in {timeout:.0f} s"}
    if proc.returncode not in (0, 1) or not proc.stdout.strip():
        lines = [ln for ln in proc.stderr.strip().splitlines() if ln.startswith("error:")]
        return {"module": module, "verdict": "refused", "note": (lines or ["?"])[-1][:200]}
    report = json.loads(proc.stdout)
    checks = report["checks"]
    ran = [c for c in checks if c["applicable"]]
    failed = [c for c in ran if not c["passed"]]
    na = [c["name"] for c in checks if not c["applicable"]]
    verdict = f"{len(ran) - len(failed)} of {len(checks)} pass"
    if na:
        verdict += f", {len(na)} not applicable"
    notes = [f"`{c['name']}` fails: {c['details'][:160]}" for c in failed]
    if na:
        notes.append(f"n/a: {', '.join(na)} ({_na_reason(checks, na[0])})")
    redteam = next((c for c in checks if c["name"] == "verifier_redteam"), None)
    if redteam is not None and redteam["applicable"] and redteam["passed"]:
        notes.append(f"red team: {redteam['details'][:120]}")
    return {
        "module": module,
        "verdict": ("**passes**: " if report["passed"] else "**fails**: ") + verdict,
        "note": "; ".join(notes),
    }


def _na_reason(checks: list[dict[str, Any]], name: str) -> str:
    details = next(c["details"] for c in checks if c["name"] == name)
    return details.split("no oracle: ")[-1][:120]


def table(rows: list[dict[str, Any]], episodes: int) -> str:
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    head = (
        f"Produced by `python benchmarks/vf_examples.py --episodes {episodes}` (Verifiers "
        f"0.3.1, `gymforge qa`), last run {stamp} on {platform.machine()}, "
        f"{os.cpu_count()} CPUs (shared, loaded).\n\n"
        "| environment | pattern | QA verdict | notes |\n|---|---|---|---|\n"
    )
    patterns = dict(EXAMPLES)
    body = "".join(
        f"| `{r['module']}` | {patterns[r['module']]} | {r['verdict']} | "
        f"{r.get('note', '').replace('|', '/')} |\n"
        for r in rows
    )
    return head + body


def write(text: str) -> None:
    doc = DOC.read_text(encoding="utf-8")
    before, rest = doc.split(START, 1)
    _, after = rest.split(END, 1)
    DOC.write_text(f"{before}{START}\n{text}{END}{after}", encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=6)
    ap.add_argument("--jobs", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=2400.0)
    ap.add_argument("--only", default="")
    ap.add_argument("--write", action="store_true", help="rewrite the table in docs/interop.md")
    args = ap.parse_args()
    chosen = [m for m, _ in EXAMPLES if not args.only or m in args.only.split(",")]
    with ThreadPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(lambda m: run_one(m, args.episodes, args.timeout), chosen))
    text = table(rows, args.episodes)
    print(text)
    if args.write:
        write(text)


if __name__ == "__main__":
    main()
