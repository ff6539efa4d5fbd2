"""``gymforge hacks``: the reward-hacking scan of a run (``gymforge.reward.hacks``), with the
scripted baselines its verifier-error rate is compared against (``--baseline`` runs, or
``--play-baselines`` on the run's own tasks)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from gymforge.cli.args import out_file
from gymforge.cli.common import app, err, friendly
from gymforge.cli.sandbox_flags import use_sandbox
from gymforge.core.errors import UserError
from gymforge.reward.hacks import scan
from gymforge.reward.verifier_errors import ErrorRate, baseline_rate
from gymforge.rollout.manifest import read_manifest
from gymforge.rollout.rundir import HACKS_REPORT
from gymforge.wording import plural


@app.command()
@friendly
def hacks(
    source: Path = typer.Argument(..., help="A run directory or a trajectories.jsonl file."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Report path (.md); JSON beside."),
    baseline: list[Path] = typer.Option(
        [],
        "--baseline",
        help="A run of a scripted baseline (oracle, noop, random) on the same environment and "
        "tasks; repeatable. The run's verifier-error rate is compared with theirs (without "
        "any baseline: with 0).",
    ),
    play_baselines: bool = typer.Option(
        False,
        "--play-baselines",
        help="Play oracle, noop and random on this run's own tasks and seeds (from its "
        "manifest, in memory) and compare with their verifier-error rates too.",
    ),
    fail_on_suspicious: bool = typer.Option(
        False, "--fail-on-suspicious", help="Exit 1 when anything is flagged."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the findings JSON to stdout."),
) -> None:
    """Scan a run for reward hacking; exits 0 once the scan completes unless asked not to."""
    path = _trajectories(source)
    rates = [baseline_rate(_trajectories(b), _policy_of(b)) for b in baseline]
    if play_baselines:
        rates += _played_baselines(path.parent)
    report = scan(path, baselines=rates, label=_policy_of(source))
    target = out_file(out) if out is not None else path.parent / HACKS_REPORT
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(report.markdown())
    target.with_suffix(".json").write_text(json.dumps(report.as_dict(), indent=2) + "\n")
    if as_json:
        print(json.dumps(report.as_dict(), indent=2))
    err.print(
        f"scanned {plural(report.episodes, 'episode')}: {report.suspicious_episodes} "
        f"suspicious, {plural(report.run_findings, 'run-level finding')}; report at {target}"
    )
    if fail_on_suspicious and report.findings:
        raise typer.Exit(1)


def _played_baselines(run_dir: Path) -> list[ErrorRate]:
    """The scripted baselines on ``run_dir``'s tasks, in the sandbox the run recorded; one
    that cannot be played there (an environment without an oracle, say) is left out with a
    warning, and none at all is an error."""
    from gymforge.evaluate.baselines import SCRIPTED_BASELINES, play_baseline

    manifest = run_dir / "manifest.json"
    if not manifest.is_file():
        raise UserError(
            f"--play-baselines needs the run's manifest.json, and {run_dir} has none; pass "
            "--baseline with runs of the scripted policies instead"
        )
    use_sandbox((read_manifest(manifest).get("sandbox") or {}).get("kind"))
    rates = []
    for policy in SCRIPTED_BASELINES:
        try:
            rates.append(play_baseline(run_dir, policy))
        except UserError as problem:
            err.print(f"[yellow]warning:[/] {problem}; compared without it", highlight=False)
    if not rates:
        raise UserError(f"no scripted baseline could be played on {run_dir}'s tasks")
    err.print("played on this run's tasks: " + ", ".join(r.text() for r in rates), highlight=False)
    return rates


def _trajectories(source: Path) -> Path:
    return source / "trajectories.jsonl" if source.is_dir() else source


def _policy_of(source: Path) -> str | None:
    """The policy a run directory's ``summary.json`` names (None for a bare file)."""
    summary = (source if source.is_dir() else source.parent) / "summary.json"
    try:
        policy = json.loads(summary.read_text()).get("policy")
    except (OSError, ValueError, AttributeError):
        return None
    return policy if isinstance(policy, str) else None
