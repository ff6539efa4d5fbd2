"""``eval`` and ``serve`` with ``--sandbox docker`` against the real engine: the episodes are
judged in containers and score as they do on the local sandbox."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from containers_helpers import CONTAINERS

from gymforge.testing.served import ServeProcess

pytestmark = CONTAINERS
ROOT = Path(__file__).resolve().parents[3]


def _env() -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("GYMFORGE_SANDBOX", None)
    return env


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gymforge.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(),
        cwd=ROOT,
        check=False,
    )


def test_eval_judges_in_containers(tmp_path: Path) -> None:
    out = tmp_path / "eval"
    args = ["eval", "code", "--policy", "oracle", "-n", "4", "--sandbox", "docker", "--json"]
    proc = _cli(*args, "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    metrics = json.loads(proc.stdout)["metrics"]
    assert metrics["episodes"] == 4 and metrics["verifier_errors"] == 0
    assert metrics["success"]["rate"] == 1.0
    sandbox = json.loads((out / "manifest.json").read_text())["sandbox"]
    assert sandbox["kind"] == "docker" and sandbox["image"] and sandbox["image_id"], sandbox


def test_serve_judges_in_containers(tmp_path: Path) -> None:
    serve = ("code", "--sandbox", "docker", "--qa-hooks")  # the oracle is a QA hook
    with ServeProcess(*serve, env=_env(), cwd=ROOT, timeout=120) as server:
        proc = _cli(
            "run", server.url, "--policy", "oracle", "-n", "3", "--json", "--out", str(tmp_path)
        )
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads(proc.stdout)
    assert summary["episodes"] == 3 and summary["success_rate"] == 1.0, summary
