"""Helpers of the interop tests: the gymforge CLI in a subprocess, and the skip that keeps the
framework tests out of a venv without the frameworks.

``verifiers`` 0.3.1 and ``openenv`` 0.10.0 both require ``mcp<2``, which conflicts with the
``[mcp]`` extra's ``mcp`` 2.x in the default venv, so they live in ``.venv-interop``
(``make test-interop``); the default suite skips the tests that need them.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
INTEROP_VENV = (
    "needs verifiers==0.3.1 and openenv==0.10.0, which conflict with the [mcp] extra "
    "(mcp<2): run `make test-interop` (its own venv, .venv-interop)"
)


def needs(module: str) -> pytest.MarkDecorator:
    """Skip unless ``module`` is importable, naming the target that runs the test."""
    return pytest.mark.skipif(importlib.util.find_spec(module) is None, reason=INTEROP_VENV)


def gymforge_cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])]
    )
    env["NO_COLOR"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "gymforge.cli", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def qa_report(ref: str, *extra: str) -> dict[str, Any]:
    """``gymforge qa REF --json``'s report (the exit code is 1 when a check fails)."""
    proc = gymforge_cli("qa", ref, "--json", *extra)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


def by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in report["checks"]}
