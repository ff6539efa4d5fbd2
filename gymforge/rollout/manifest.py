"""Run manifests: everything needed to re-run a run and check it came out the same.

Every run writes ``manifest.json`` beside its trajectories: the ``RunSpec`` (environment,
policy, task sampling and group settings), the task ids it drew, the environment and
renderer versions, dataset hashes, the sandbox backend untrusted code ran in (with the
container image's id), the gymforge version and git commit, the Python version and the exact
versions of every installed distribution. ``gymforge reproduce`` reads it, and
``--resume`` compares a new invocation with it (``resume_mismatches``) so that two different
runs never mix in one directory.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from gymforge import version as gymforge_version
from gymforge.core.env import EnvSpec
from gymforge.core.errors import ConfigError
from gymforge.rollout.spec import RunSpec, recorded_fields
from gymforge.sandbox.selection import describe_selection
from gymforge.verify.services import current

MANIFEST_VERSION = 1


Command = Literal["run", "eval", "calibrate"]


RESUME_MAY_GROW = frozenset({"n", "epochs"})
"""``RunSpec`` fields a resumed run may raise: more tasks, more epochs of the same tasks."""

RESUME_MAY_DIFFER = frozenset({"concurrency", "backend", "episode_timeout", "max_retries"})
"""``RunSpec`` fields a resumed run may change: they decide how episodes run, not what they
are. ``dataset`` (a path) is compared by content hash instead; ``n`` may only grow."""


def git_commit() -> str | None:
    """The commit of the gymforge checkout in use, if it is one (with ``-dirty`` if edited)."""
    root = Path(gymforge_version.__file__).resolve().parents[1]
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--", "gymforge"],
            capture_output=True,
            text=True,
            timeout=5,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("-dirty" if dirty else "")


def locked_dependencies() -> dict[str, str]:
    """``{distribution: version}`` of everything installed, sorted by name."""
    found = {}
    for dist in md.distributions():
        name = dist.metadata["Name"]
        if name:
            found[name.lower()] = dist.version
    return dict(sorted(found.items()))


def build_manifest(
    spec: RunSpec,
    env_spec: EnvSpec,
    task_ids: list[str],
    datasets: list[dict[str, Any]],
    *,
    command: Command = "run",
    config: dict[str, Any] | None = None,
    policy_checkpoint: str | None = None,
) -> dict[str, Any]:
    """The manifest of one run. ``command`` is the CLI command that wrote it; ``config`` is
    that command's own settings (eval's k, calibrate's band, ...), which ``reproduce``
    needs to recompute its results."""
    return {
        "manifest_version": MANIFEST_VERSION,
        "command": command,
        "run": spec.model_dump(),
        "config": config or {},
        "policy": {"spec": spec.policy, "checkpoint": policy_checkpoint},
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "gymforge": {"version": gymforge_version.__version__, "git_commit": git_commit()},
        "env": {
            "id": env_spec.id,
            "version": env_spec.version,
            "renderer_version": env_spec.renderer_version,
        },
        "tasks": task_ids,
        "datasets": datasets,
        "paths": recorded_paths(spec.env, spec.dataset, spec.out or Path.cwd()),
        "sandbox": describe_selection(current().settings.sandbox),  # the run's choice
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
            "platform": sys.platform,
        },
        "dependencies": locked_dependencies(),
    }


def file_env_path(env: str) -> str | None:
    """The ``FILE.py`` part of a ``FILE.py:Class`` (or bare ``FILE.py``) environment."""
    module = env.rpartition(":")[0] if ":" in env else env
    if "://" in env or not module.endswith(".py"):
        return None
    return module


def path_record(given: str, out: Path) -> dict[str, str]:
    """``given`` (a path as typed, relative to the working directory) as a manifest in
    ``out`` records it: as given, absolute, and relative to ``out``."""
    absolute = Path(given).resolve()
    return {
        "given": given,
        "absolute": str(absolute),
        "relative": os.path.relpath(absolute, Path(out).resolve()),
    }


def recorded_paths(env: str, dataset: str | None, out: Path) -> dict[str, Any]:
    """The ``paths`` entry of a manifest written in ``out``."""
    file = file_env_path(env)
    return {
        "env": None if file is None else path_record(file, out),
        "dataset": None if dataset is None else path_record(dataset, out),
    }


def write_manifest(out_dir: str | Path, manifest: dict[str, Any]) -> Path:
    path = Path(out_dir) / "manifest.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest, indent=2) + "\n")
    return path


def read_manifest(path: str | Path) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise ConfigError(f"cannot read manifest {path}: {err}") from err
    if (
        not isinstance(data, dict)
        or data.get("manifest_version") != MANIFEST_VERSION
        or "run" not in data
    ):
        raise ConfigError(f"{path} is not a gymforge manifest (version {MANIFEST_VERSION})")
    return data


def manifest_spec(manifest: dict[str, Any], path: str | Path) -> RunSpec:
    """The ``run`` of manifest ``path`` (read by ``read_manifest``) as a ``RunSpec``;
    ConfigError naming the first bad field of a hand-edited one."""
    try:
        return RunSpec.model_validate(manifest["run"])
    except ValidationError as err:
        raise ConfigError(f"{path}: run.{_validation_problem(err)}") from None


def resume_mismatches(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Why the run described by manifest ``new`` cannot continue the run of manifest
    ``old``: one ``field: was X, now Y`` entry per difference (empty when it can).

    Every ``RunSpec`` field is compared, save ``RESUME_MAY_DIFFER`` (and
    ``RESUME_MAY_GROW``, which may not shrink); a field a manifest
    lacks (written before the field existed) counts as its default. Also compared: the
    command, the environment id and versions, the policy checkpoint, the dataset hashes,
    and the task list (every task of the old run must still be drawn)."""
    problems: list[str] = []

    def differ(name: str, was: Any, now: Any) -> None:
        if was != now:
            problems.append(f"{name}: was {_show(was)}, now {_show(now)}")

    differ("command", old.get("command", "run"), new.get("command", "run"))
    a, b = old.get("run", {}), new.get("run", {})
    fields = RunSpec.model_fields
    defaults = {k: fields[k].get_default(call_default_factory=True) for k in recorded_fields()}
    for key in sorted(set(a) | set(b) | set(defaults)):
        if key in RESUME_MAY_DIFFER or key == "dataset":
            continue
        was, now = a.get(key, defaults.get(key)), b.get(key, defaults.get(key))
        if key in RESUME_MAY_GROW and isinstance(was, int) and isinstance(now, int):
            if now < was:
                problems.append(f"{key}: was {was}, now {now} ({key} may grow, not shrink)")
            continue
        differ(key, was, now)
    for key in ("id", "version", "renderer_version"):
        differ(f"env {key}", old.get("env", {}).get(key), new.get("env", {}).get(key))
    was_ckpt = (old.get("policy") or {}).get("checkpoint")
    now_ckpt = (new.get("policy") or {}).get("checkpoint")
    if was_ckpt is not None and now_ckpt is not None and a.get("policy") == b.get("policy"):
        differ("policy checkpoint", was_ckpt, now_ckpt)
    differ("datasets", _hashes(old), _hashes(new))
    if not problems:
        drawn = set(new.get("tasks", []))
        dropped = [t for t in old.get("tasks", []) if t not in drawn]
        if dropped:
            problems.append(
                f"tasks: {len(dropped)} of the run's tasks are not drawn now (first: {dropped[0]})"
            )
    return problems


def _hashes(manifest: dict[str, Any]) -> list[str]:
    return [f"{d.get('name')}@{str(d.get('sha256'))[:12]}" for d in manifest.get("datasets", [])]


def _show(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def _validation_problem(err: ValidationError) -> str:
    """A pydantic ``ValidationError`` on one line (its first problem: where, then what), for
    the ``ConfigError`` that names a bad file's field."""
    first = err.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "value"
    return f"{where}: {first['msg']}"
