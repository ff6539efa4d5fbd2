"""``gymforge pack DIR``: QA every environment a package registers, then build its sdist and
wheel with the standard frontend (PyPI's ``build``) with each QA report embedded.

Steps: read ``DIR/pyproject.toml``'s ``gymforge.environments`` entry points; run
``gymforge qa MODULE:ATTR`` on each from the source tree (a child process, so the package's
modules are imported from DIR and nothing leaks into this process); refuse to build when a
check fails (``--allow-failed`` embeds a failing report instead); write each report as
``<id>.qa.json`` beside its module, with the sha256 of the files QA ran on
(``gymforge.registry.packed``: ``gymforge list`` checks them); ``python -m build`` (the
sdist, then the wheel from the sdist); check that both archives carry every report; remove the
reports from the source tree again. stdout gets one JSON object naming what was built.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

from gymforge.cli.args import out_dir
from gymforge.cli.common import app, err, friendly
from gymforge.core.errors import UserError
from gymforge.registry.installed import GROUP
from gymforge.registry.packed import EmbeddedReport, report_name, source_hashes
from gymforge.settings import inherited_environ
from gymforge.version import __version__

QA_TIMEOUT_S = 1800.0
BUILD_TIMEOUT_S = 1800.0


@dataclass(frozen=True)
class PackedEnv:
    """One entry point of the package and where its module lives in the source tree."""

    id: str
    value: str
    module_dir: Path
    """The directory that holds the module's file: its report is written there."""
    import_root: Path
    """``DIR/src`` or ``DIR``: where the module's top-level package is (the QA child's path)."""


@dataclass(frozen=True)
class Project:
    root: Path
    name: str
    version: str
    envs: list[PackedEnv]


def _module_dir(roots: list[Path], module: str) -> tuple[Path, Path] | None:
    """(import root, directory of the module's file) for ``a.b.c`` under one of ``roots``."""
    parts = module.split(".")
    for root in roots:
        base = root.joinpath(*parts)
        if base.with_suffix(".py").is_file():
            return root, base.parent
        if (base / "__init__.py").is_file():
            return root, base
    return None


def read_project(directory: Path) -> Project:
    """The package's name, version and environments; a ``UserError`` for what is missing."""
    pyproject = directory / "pyproject.toml"
    if not pyproject.is_file():
        raise UserError(f"{directory} is not a package directory: it has no pyproject.toml")
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"{pyproject}: {e}") from None
    project = data.get("project", {})
    name, version = project.get("name"), project.get("version")
    if not name or not version:
        raise UserError(f"{pyproject}: [project] needs a name and a (static) version")
    points: dict[str, str] = project.get("entry-points", {}).get(GROUP, {})
    if not points:
        raise UserError(
            f'{pyproject} registers no environment: add [project.entry-points."{GROUP}"] '
            'with a line like my_env = "my_pkg.env:MyEnv"'
        )
    roots = [directory / "src", directory]
    envs = []
    for env_id, value in sorted(points.items()):
        module = value.partition(":")[0]
        found = _module_dir(roots, module) if ":" in value else None
        if found is None:
            raise UserError(
                f"{pyproject}: entry point {env_id} = {value!r}: no module {module!r} under "
                f"{directory} (or its src/), or the value is not module:attr"
            )
        envs.append(PackedEnv(env_id, value, found[1], found[0]))
    return Project(directory, str(name), str(version), envs)


def child_env(import_root: Path) -> dict[str, str]:
    """This process's environment with ``import_root`` first on the child's path."""
    path = [str(import_root), *(p for p in sys.path if p and Path(p).is_dir())]
    return inherited_environ(PYTHONPATH=os.pathsep.join(path))


def run_qa(env: PackedEnv, episodes: int, workdir: Path) -> dict[str, Any]:
    """``gymforge qa`` on the source tree's environment; its JSON report."""
    out = workdir / f"{env.id}.report.json"
    cmd = [sys.executable, "-m", "gymforge.cli", "qa", env.value, "-e", str(episodes)]
    cmd += ["--report", str(out)]
    err.print(f"qa {env.id} ({env.value})")
    try:
        proc = subprocess.run(
            cmd, env=child_env(env.import_root), cwd=env.import_root, timeout=QA_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        raise UserError(f"gymforge qa {env.value} took over {QA_TIMEOUT_S:.0f} s") from None
    if proc.returncode not in (0, 1) or not out.is_file():
        raise UserError(f"gymforge qa {env.value} could not run (exit {proc.returncode})")
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    if report.get("env") != env.id:
        raise UserError(
            f"entry point {env.id} = {env.value!r} makes the environment "
            f"{report.get('env')!r}: the entry point's name must equal its spec.id"
        )
    return report


def _build(project: Project, outdir: Path, isolation: bool) -> list[Path]:
    """``python -m build`` into a fresh directory; the sdist and the wheel it made."""
    if importlib.util.find_spec("build") is None:
        raise UserError("gymforge pack needs PyPI's build: pip install 'gymforge[pack]'")
    with tempfile.TemporaryDirectory(prefix="gymforge-pack-") as tmp:
        cmd = [sys.executable, "-m", "build", "--outdir", tmp, str(project.root)]
        if not isolation:
            cmd.append("--no-isolation")
        err.print(f"build {project.name} {project.version}")
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise UserError(f"python -m build took over {BUILD_TIMEOUT_S:.0f} s") from None
        if proc.returncode != 0:
            tail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-12:]
            raise UserError("python -m build failed: " + " | ".join(tail))
        outdir.mkdir(parents=True, exist_ok=True)
        built = []
        for made in sorted(Path(tmp).iterdir()):
            dest = outdir / made.name
            shutil.move(made, dest)
            built.append(dest)
    return built


def archive_names(path: Path) -> list[str]:
    """The member names of a wheel or an sdist (the sdist's top directory stripped)."""
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as z:
            return z.namelist()
    with tarfile.open(path) as t:
        return [n.partition("/")[2] for n in t.getnames()]


def check_embedded(project: Project, built: list[Path]) -> None:
    """Every report is in every archive, else the package data to declare."""
    for archive in built:
        names = set(archive_names(archive))
        base = project.root
        for env in project.envs:
            report = env.module_dir / report_name(env.id)
            wanted = report.relative_to(env.import_root if archive.suffix == ".whl" else base)
            if wanted.as_posix() not in names:
                package = report.parent.relative_to(env.import_root).as_posix().replace("/", ".")
                raise UserError(
                    f"{archive.name} lacks the QA report {wanted.as_posix()}: declare it as "
                    f'package data ([tool.setuptools.package-data] {package} = ["*.qa.json"])'
                )


@app.command()
@friendly
def pack(
    directory: Path = typer.Argument(..., help="The package directory (with pyproject.toml)."),
    outdir: Path | None = typer.Option(None, "--outdir", "-o", help="Default: DIR/dist."),
    episodes: int = typer.Option(24, "--episodes", "-e", min=2, help="QA episodes per sample."),
    isolation: bool = typer.Option(
        True,
        "--isolation/--no-isolation",
        help="Build in an isolated environment (build installs the build backend from the "
        "package index) or in this one (the backend must be installed here).",
    ),
    allow_failed: bool = typer.Option(
        False, "--allow-failed", help="Build even when a QA check fails (the report says so)."
    ),
) -> None:
    """Run QA on a package's environments, then build its sdist and wheel with the QA reports
    embedded; prints {"sdist", "wheel", "envs"} as JSON."""
    if outdir is not None:
        out_dir(outdir, "--outdir")
    project = read_project(directory.resolve())
    written: list[Path] = []
    try:
        with tempfile.TemporaryDirectory(prefix="gymforge-pack-qa-") as work:
            for env in project.envs:
                sources = source_hashes(env.module_dir)
                report = run_qa(env, episodes, Path(work))
                if source_hashes(env.module_dir) != sources:
                    raise UserError(
                        f"the files under {env.module_dir} changed while QA ran on them: "
                        "not packed (run gymforge pack again)"
                    )
                if not report.get("passed") and not allow_failed:
                    failed = [c["name"] for c in report["checks"] if not c["passed"]]
                    raise UserError(
                        f"{env.id} failed QA ({', '.join(failed)}): not packed "
                        "(fix it, or --allow-failed to embed the failing report)"
                    )
                embedded = EmbeddedReport(
                    env=env.id,
                    package=project.name,
                    package_version=project.version,
                    gymforge_version=__version__,
                    report=report,
                    sources=sources,
                )
                path = env.module_dir / report_name(env.id)
                path.write_text(embedded.model_dump_json(indent=2) + "\n", encoding="utf-8")
                written.append(path)
        built = _build(project, (outdir or project.root / "dist").resolve(), isolation)
        check_embedded(project, built)
    finally:
        for path in written:
            path.unlink(missing_ok=True)
    by_kind = {("wheel" if p.suffix == ".whl" else "sdist"): str(p) for p in built}
    for p in built:
        err.print(f"built {p}")
    print(json.dumps({**by_kind, "envs": [e.id for e in project.envs]}))
