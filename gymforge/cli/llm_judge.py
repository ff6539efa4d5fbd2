"""Rubric judges: ``judge calibrate``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from gymforge.cli.args import out_file
from gymforge.cli.common import app, err, friendly
from gymforge.core.errors import ConfigError

judge_app = typer.Typer(no_args_is_help=True, help="Rubric LLM judges: calibration.")
app.add_typer(judge_app, name="judge")


def _rubric(path: Path | None) -> Any:
    from pydantic import ValidationError

    from gymforge.verify.llm_judge import DEFAULT_RUBRIC, Rubric

    if path is None:
        return DEFAULT_RUBRIC
    try:
        return Rubric.model_validate_json(path.read_text())
    except ValidationError as e:
        raise ConfigError(f"{path}: not a rubric: {e.errors()[0]['msg']}") from None


@judge_app.command()
@friendly
def calibrate(
    labels: Path = typer.Option(..., "--labels", help="Human labels (JSONL)."),
    judge: str | None = typer.Option(
        None, "--judge", help="Grade afresh with openai:MODEL (default: the labels' records)."
    ),
    base_url: str | None = typer.Option(None, "--base-url", help="OpenAI-compatible server."),
    rubric: Path | None = typer.Option(None, "--rubric", help="Rubric JSON (default rubric)."),
    out: Path | None = typer.Option(None, "--out", help="Write the calibration JSON here."),
    concurrency: int = typer.Option(8, "--concurrency", min=1, help="Judge calls at once."),
    max_tokens: int | None = typer.Option(None, "--max-tokens", help="Judge reply limit."),
    as_json: bool = typer.Option(False, "--json", help="Print the calibration JSON to stdout."),
) -> None:
    """Measure a judge's agreement with human labels and pick its decision threshold.

    Prints accuracy, Cohen's kappa, the confusion matrix and per-criterion agreement; with
    --out, writes the calibration that RubricJudge(calibration=Calibration.load(...))
    stamps on every verdict."""
    from gymforge.verify import llm_judge as J

    if out is not None:
        out_file(out)
    items, digest = J.load_labels(labels)
    if judge is None:
        records, version = J.recorded(items)
    else:
        from gymforge.rollout.openai_policy import make_openai_policy_factory

        factory = make_openai_policy_factory(
            judge,
            base_url,
            temperature=0.0,
            logprobs=False,
            return_token_ids=False,
            max_tokens=max_tokens,
        )
        grader = J.RubricJudge(factory, _rubric(rubric), model=judge)

        async def grade() -> list[J.JudgeRecord]:
            try:
                return await J.score_items(grader, items, concurrency)
            finally:
                await factory.aclose()

        records, version = asyncio.run(grade()), grader.version
    result = J.calibrate(items, records, judge_version=version, labels_sha256=digest)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        result.save(out)
        err.print(f"wrote {out}")
    _show(result)
    if as_json:
        print(json.dumps(result.model_dump(mode="json"), indent=2))


def _fmt(x: float | None) -> str:
    return "undefined" if x is None else f"{x:.3f}"


def _show(c: Any) -> None:
    m = c.confusion
    err.print(
        f"judge {c.judge_version}: {c.n} labelled items, threshold {c.threshold:g} "
        f"(chosen for {c.selection})",
        highlight=False,
    )
    err.print(f"accuracy {_fmt(c.accuracy)}, Cohen's kappa {_fmt(c.kappa)}", highlight=False)
    table = Table("", "judge pass", "judge fail", title="confusion (rows: human)")
    table.add_row("human pass", str(m["tp"]), str(m["fn"]))
    table.add_row("human fail", str(m["fp"]), str(m["tn"]))
    err.print(table)
    if c.per_criterion:
        per = Table("criterion", "n", "accuracy", "kappa", title="per-criterion agreement")
        for name, a in c.per_criterion.items():
            per.add_row(name, str(a.n), _fmt(a.accuracy), _fmt(a.kappa))
        err.print(per)
