"""Environment QA and authoring: ``qa``, ``new``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from gymforge.cli.args import out_file
from gymforge.cli.common import app, err, friendly
from gymforge.cli.harbor_flags import IMAGE_MAP
from gymforge.cli.sandbox_flags import SANDBOX, use_settings
from gymforge.core.errors import GymforgeError
from gymforge.registry.installed import find
from gymforge.registry.packed import read_embedded
from gymforge.registry.resolve import BUILTIN
from gymforge.rollout.scripted import scripted_policy
from gymforge.settings import cache_home, library_default
from gymforge.version import __version__


def user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/gymforge``, else ``~/.cache/gymforge``."""
    base = cache_home() or str(Path.home() / ".cache")
    return Path(base) / "gymforge"


@app.command()
@friendly
def qa(
    env: str = typer.Argument(..., help="Environment id or import path (pkg.mod:factory)."),
    episodes: int = typer.Option(24, "--episodes", "-e", min=2, help="Episodes per sample."),
    seed: int = typer.Option(0, "--seed", "-s"),
    policy: str | None = typer.Option(None, "--policy", help="Audit success rates of this policy."),
    check: list[str] = typer.Option(None, "--check", help="Run only these checks."),
    as_json: bool = typer.Option(False, "--json", help="Print the JSON report to stdout."),
    report: Path | None = typer.Option(None, "--report", help="Also write the JSON report here."),
    token: str | None = typer.Option(None, "--token", help="Bearer token of a ws:// env."),
    record_golden: bool = typer.Option(
        False,
        "--record-golden",
        help="Write the golden renderings of the current renderer_version beside the "
        "environment's code instead of running the checks.",
    ),
    show_embedded: bool = typer.Option(
        False,
        "--show-embedded",
        help="Print the QA report that `gymforge pack` embedded in the installed package of "
        "ENV instead of running the checks (exit 0 only if that report passed).",
    ),
    sandbox: str | None = SANDBOX,
    image_map: list[str] | None = IMAGE_MAP,
) -> None:
    """Run the ten QA checks; exit 0 only if every check passes."""
    if report is not None:
        out_file(report, "--report")
    if show_embedded:
        _show_embedded(env)
        return
    use_settings(sandbox=sandbox, token=token or None, image_map=image_map)
    # hypothesis (the error_paths fuzzer) keeps its caches under the user's cache directory,
    # not in a .hypothesis/ folder of whatever directory gymforge qa runs in
    library_default("HYPOTHESIS_STORAGE_DIRECTORY", str(user_cache_dir() / "hypothesis"))
    from gymforge.qa import QAOptions, QATarget, run_qa
    from gymforge.qa_profile import CHECK_NAMES

    unknown = sorted(set(check or []) - set(CHECK_NAMES))
    if unknown:
        raise GymforgeError(f"unknown checks {unknown}; checks: {', '.join(CHECK_NAMES)}")
    if policy is not None:
        scripted_policy(policy)
    cross_process = {"replay_determinism", "reset_isolation"} & set(check or CHECK_NAMES)
    target = QATarget.load(env, start_fresh=bool(cross_process) and not record_golden)
    if record_golden:
        from gymforge.qa.golden import record

        path = record(target)
        err.print(f"wrote {path} (renderer_version {target.spec.renderer_version!r})")
        return
    table = Table("check", "result", "seconds", "details", title=f"gymforge qa {env}")

    def show(result: Any) -> None:
        mark = (
            ("[green]pass[/]" if result.passed else "[bold red]FAIL[/]")
            if result.applicable
            else "[yellow]n/a[/]"
        )
        if not as_json:
            err.print(f"{mark:>20}  {result.name}", highlight=False)
        table.add_row(result.name, mark, f"{result.seconds:.2f}", result.details)

    outcome = run_qa(
        target,
        QAOptions(episodes=episodes, seed=seed, policy=policy),
        only=check or None,
        on_result=show,
    )
    data = outcome.as_json()
    if report is not None:
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(json.dumps(data, indent=2) + "\n")
    if as_json:
        print(json.dumps(data, indent=2))
    else:
        err.print(table)
        err.print(f"{env} {target.spec.version}: {outcome.summary()}", highlight=False)
    if not outcome.passed:
        raise typer.Exit(1)


def _show_embedded(env: str) -> None:
    entry = find(env, frozenset(BUILTIN)) if env not in BUILTIN else None
    if entry is None:
        raise GymforgeError(
            f"{env!r} is not an installed package's environment: only those carry an "
            "embedded QA report (see gymforge list)"
        )
    embedded = read_embedded(entry)
    if embedded is None:
        raise GymforgeError(
            f"{entry.origin} carries no QA report for {env!r}: it was not built by "
            "gymforge pack (an editable install reads the source tree)"
        )
    print(embedded.model_dump_json(indent=2))
    stale = embedded.package_version != entry.package_version
    note = f"; packed as {embedded.package_version}, installed {entry.package_version}"
    err.print(f"{env} from {entry.origin}: embedded QA {embedded.summary()}{note if stale else ''}")
    if not embedded.passed:
        raise typer.Exit(1)


@app.command()
@friendly
def new(
    name: str = typer.Argument(..., help="Environment name (a lowercase identifier)."),
    directory: Path = typer.Option(Path("."), "--dir", "-d", help="Where to write the files."),
    force: bool = typer.Option(False, "--force", help="Overwrite existing files."),
    package: bool = typer.Option(
        False,
        "--package",
        help="Write an installable package DIR/NAME/ instead: pyproject.toml with the "
        "gymforge.environments entry point NAME, README.md, NAME/env.py, tests/test_NAME.py.",
    ),
) -> None:
    """Write a one-file environment NAME.py and its QA test test_NAME.py (or, with
    --package, the same inside a package that pip install -e makes usable as NAME)."""
    from gymforge.scaffold import class_name, scaffold, scaffold_package

    if package:
        written = scaffold_package(name, directory, __version__, force)
    else:
        written = scaffold(name, directory, force)
    for path in written:
        err.print(f"wrote {path}")
    if package:
        root = written[0].parent
        err.print(f"next: pip install -e {root} && gymforge qa {name}")
    else:
        err.print(f"next: gymforge qa {written[0]}:{class_name(name)}")
