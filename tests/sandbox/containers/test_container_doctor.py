"""``gymforge sandbox doctor --sandbox docker`` on a machine ``make containers`` set up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from containers_helpers import CONTAINERS

pytestmark = CONTAINERS

ROOT = Path(__file__).resolve().parents[3]


def test_the_container_doctor_passes_every_check_and_runs_the_bombs() -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("GYMFORGE_SANDBOX_IMAGE", None)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gymforge.cli",
            "sandbox",
            "doctor",
            "--sandbox",
            "docker",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    checks = {c["name"]: c for c in report["checks"]}
    assert all(c["ok"] is not False for c in report["checks"]), report["checks"]
    for name in (
        "container engine",
        "containers.conf",
        "image gymforge-base-python",
        "image gymforge-base-full",
        "job uid unprivileged",
        "job capabilities empty",
        "job no_new_privs",
        "job cannot write /etc",
        "job has no network",
        "worker cgroups",
        "memory bomb stopped",
        "fork bomb stopped",
    ):
        assert checks[name]["ok"] is True, checks[name]
    assert "c, cpp, javascript, python" in checks["image gymforge-base-full"]["detail"]
    assert report["isolation"] == "docker" and "container sandbox available" in proc.stderr
