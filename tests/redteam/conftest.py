"""Fixtures for the red-team corpus (see ``README.md``): real sandboxes and a real code judge.

Every fixture here is the production component, never a stand-in: a bubblewrap
``LocalBackend`` on test-only uids, a ``CodeJudge`` on top of it, and helpers that drive the
real CLI. Tests that need a sandbox skip (with the reason) where bubblewrap cannot run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from judge_fixture import corpus_backend

from gymforge.sandbox import Limits, Result, SandboxJob
from gymforge.sandbox.languages import default_cache_dir
from gymforge.sandbox.local import LocalBackend, ZygotePool
from gymforge.verify.code import CodeJudge

ROOT = Path(__file__).resolve().parents[2]

# Sandbox uids for this test process: distinct from a deployment's (60000+), from other test
# runs on the machine, and from the other test packages' offsets (tests/sandbox uses +0..+71).
UID_BASE = 100_000 + (os.getpid() % 5000) * 100 + 90

REDTEAM_LIMITS = Limits(
    wall_time=5,
    cpu_time=3,
    memory_bytes=256 << 20,
    output_bytes=64 << 10,
    call_timeout=2,
    processes=16,
)


@pytest.fixture(scope="session")
def artefact_cache() -> Iterator[Path]:
    """A fresh compiled-artefact cache shared by the corpus (so attacks on it see only what
    this session compiled). Made where a default cache lives, not under pytest's private
    temporary directory, so the sandbox sees it exactly as a deployment's."""
    path = Path(tempfile.mkdtemp(prefix="gymforge-redteam-cache-", dir=default_cache_dir().parent))
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def sandbox(artefact_cache: Path) -> Iterator[ZygotePool]:
    """One two-worker bubblewrap backend for the whole corpus (containers under
    ``GYMFORGE_REDTEAM_SANDBOX=docker``: see ``judge_fixture``)."""
    backend = corpus_backend(2, UID_BASE, cache_dir=artefact_cache)
    yield backend
    backend.close()


@pytest.fixture(scope="session")
def code_judge(sandbox: LocalBackend) -> CodeJudge:
    """The production code judge on the corpus's sandbox."""
    return CodeJudge(backend=sandbox)


@pytest.fixture
def run_job(sandbox: LocalBackend) -> Any:
    """``run_job(source, **job_fields) -> Result`` with the corpus's default limits."""

    def run(source: str, **kw: Any) -> Result:
        kw.setdefault("limits", REDTEAM_LIMITS)
        return sandbox.run(SandboxJob(source=source, **kw))

    return run


@pytest.fixture
def serve() -> Iterator[Any]:
    """``serve(env="ledger", **ServeConfig fields) -> ServerThread``: a real server on an
    ephemeral 127.0.0.1 port (``.url``), started with a bounded wait, stopped at teardown."""
    from gymforge.serve.config import ServeConfig
    from gymforge.serve.launch import ServerThread

    servers: list[Any] = []

    def start(env: str = "ledger", **config: Any) -> Any:
        server = ServerThread(env, ServeConfig(**config)).start(timeout=20)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture(scope="session")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """``finished_run(env="ledger", n=4, *cli_args) -> Path``: the directory of a real
    ``gymforge run ENV --policy oracle`` (``trajectories.jsonl``, ``summary.json``,
    ``manifest.json``), made once per argument set; copy it before editing it."""
    made: dict[tuple[Any, ...], Path] = {}

    def run(env: str = "ledger", n: int = 4, *args: str) -> Path:
        key = (env, n, *args)
        if key not in made:
            out = tmp_path_factory.mktemp(f"run-{env}")
            cmd = [sys.executable, "-m", "gymforge.cli", "run", env, "-n", str(n)]
            proc = subprocess.run(
                [*cmd, "--out", str(out), *args],
                capture_output=True,
                text=True,
                timeout=300,
                env=dict(os.environ, PYTHONPATH=str(ROOT)),
                cwd=ROOT,
                check=False,
            )
            assert proc.returncode == 0, proc.stderr
            made[key] = out
        return made[key]

    return run


@pytest.fixture(scope="session")
def path_without(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """``path_without(*programs) -> str``: a ``PATH`` value offering every program of this
    machine's ``PATH`` except ``programs`` (a machine where they are not installed)."""

    def make(*programs: str) -> str:
        d = tmp_path_factory.mktemp("path-without-" + "-".join(programs))
        for entry in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep):
            if not os.path.isdir(entry):
                continue
            for name in os.listdir(entry):
                link = d / name
                if name not in programs and not link.exists():
                    link.symlink_to(os.path.join(entry, name))
        return str(d)

    return make


@pytest.fixture
def gymforge_cli() -> Any:
    """``gymforge_cli(*args, env=None, timeout=120) -> CompletedProcess``: the real CLI in a
    subprocess of this checkout (``env`` entries are added to, or with value ``None``
    removed from, the current environment)."""

    def run(
        *args: str, env: dict[str, str | None] | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        full = dict(os.environ, PYTHONPATH=str(ROOT))
        for k, v in (env or {}).items():
            if v is None:
                full.pop(k, None)
            else:
                full[k] = v
        return subprocess.run(
            [sys.executable, "-m", "gymforge.cli", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=full,
            cwd=ROOT,
            check=False,
        )

    return run
