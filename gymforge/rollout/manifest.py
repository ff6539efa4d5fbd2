"""Run manifests: everything needed to re-run a run and check it came out the same.

Every run writes ``manifest.json`` beside its trajectories: the ``RunSpec`` (environment,
policy, task sampling and group settings), the task ids it drew, the environment and
renderer versions, dataset hashes, the gymforge version and git commit, the Python version
and the exact versions of every installed distribution. ``gymforge reproduce`` reads it.
"""

from __future__ import annotations

import importlib.metadata as md
import json
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

import gymforge
from gymforge.core.env import EnvSpec
from gymforge.core.errors import ConfigError

MANIFEST_VERSION = 1


class RunSpec(BaseModel):
    """What a run was asked to do. ``concurrency`` and ``backend`` never change results; the
    rest may."""

    model_config = ConfigDict(extra="forbid")

    env: str
    policy: str
    n: int = Field(ge=1)
    seed: int = 0
    split: Literal["train", "heldout", "all"] = "train"
    group: int = Field(default=1, ge=1)
    dataset: str | None = None
    concurrency: int = Field(default=1, ge=1)
    episode_timeout: float | None = None
    max_retries: int = Field(default=2, ge=0)
    backend: Literal["local", "ray", "redis"] = "local"


def git_commit() -> str | None:
    """The commit of the gymforge checkout in use, if it is one (with ``-dirty`` if edited)."""
    root = Path(gymforge.__file__).resolve().parents[1]
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
    spec: RunSpec, env_spec: EnvSpec, task_ids: list[str], datasets: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "manifest_version": MANIFEST_VERSION,
        "run": spec.model_dump(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "gymforge": {"version": gymforge.__version__, "git_commit": git_commit()},
        "env": {
            "id": env_spec.id,
            "version": env_spec.version,
            "renderer_version": env_spec.renderer_version,
        },
        "tasks": task_ids,
        "datasets": datasets,
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
            "platform": sys.platform,
        },
        "dependencies": locked_dependencies(),
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
    if data.get("manifest_version") != MANIFEST_VERSION or "run" not in data:
        raise ConfigError(f"{path} is not a gymforge manifest (version {MANIFEST_VERSION})")
    return data
