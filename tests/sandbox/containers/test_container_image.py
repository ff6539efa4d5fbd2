"""The project image (``make image``: the Dockerfile on the local base, built offline):
``gymforge demo`` runs inside it, and a run made inside reproduces identically on the host,
and a run made on the host inside it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from containers_helpers import CONTAINERS, READY

from gymforge.sandbox.docker_engine import engine, run_engine

IMAGE = os.environ.get("GYMFORGE_PROJECT_IMAGE", "gymforge-project")
ROOT = Path(__file__).resolve().parents[3]


def _image_ready() -> bool:
    return READY and run_engine(engine().cli, "image", "exists", IMAGE).returncode == 0


pytestmark = [
    *CONTAINERS,
    pytest.mark.skipif(not _image_ready(), reason=f"no {IMAGE} image; run `make image`"),
]


def inside(runs: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """``gymforge ARGS`` in a fresh container of the image, ``runs`` mounted at /runs."""
    return run_engine(
        engine().cli,
        *("run", "--rm", "--network", "none", "-v", f"{runs}:/runs", IMAGE, "gymforge", *args),
        timeout=600,
    )


def host(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gymforge.cli", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        cwd=ROOT,
        check=False,
    )


def test_the_demo_runs_inside_the_image(tmp_path: Path) -> None:
    p = inside(tmp_path, "demo", "-n", "4", "--out", "/runs/demo")
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    assert b"replay of the oracle run: ok" in p.stderr
    assert (tmp_path / "demo" / "oracle" / "trajectories.jsonl").stat().st_size > 0


def test_a_run_made_inside_reproduces_on_the_host_and_back(tmp_path: Path) -> None:
    run = ("run", "ledger", "--policy", "random", "-n", "6", "--seed", "5")
    p = inside(tmp_path, *run, "--out", "/runs/inside")
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    h = host("reproduce", str(tmp_path / "inside"), "--out", str(tmp_path / "inside-on-host"))
    assert h.returncode == 0, h.stderr[-2000:]
    assert "6/6 episodes identical" in h.stderr, h.stderr

    h = host(*run, "--out", str(tmp_path / "host"))
    assert h.returncode == 0, h.stderr[-2000:]
    p = inside(tmp_path, "reproduce", "/runs/host", "--out", "/runs/host-inside")
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    assert b"6/6 episodes identical" in p.stderr, p.stderr.decode()
