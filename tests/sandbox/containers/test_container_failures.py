"""Infrastructure failures of the container backend: a container that dies mid-job is retried
on a fresh worker (the job's result is its own, never the death's); an engine that is gone
gives ``internal_error``, never a verdict, and the pool recovers when it is back; an image
without a job's language is refused, naming the missing runtime."""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from containers_helpers import CONTAINERS, UID_BASE
from sandbox_helpers import processes_of_uids

from gymforge.sandbox import IsolationUnavailableError, Limits, SandboxJob, Status
from gymforge.sandbox.docker import DockerBackend
from gymforge.sandbox.docker_engine import IMAGE_PYTHON, _probe, engine, run_engine
from gymforge.sandbox.preflight import require_sandbox
from gymforge.settings import Settings

pytestmark = CONTAINERS

LIMITS = Limits(wall_time=20, cpu_time=5, memory_bytes=256 << 20, processes=16)


def wait_for(predicate: object, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


def test_a_container_killed_mid_job_is_retried_on_a_fresh_worker() -> None:
    with DockerBackend(workers=1, image=IMAGE_PYTHON, uid_base=UID_BASE + 6) as b:
        uid = b.launcher.uid(0)
        name = b.launcher.container(b.runtime, 0)
        job = SandboxJob(
            source="import subprocess\nsubprocess.run(['sleep', '2'])\nprint('done')",
            limits=LIMITS,
        )
        results = []
        t = threading.Thread(target=lambda: results.append(b.run(job)))
        t.start()
        wait_for(lambda: any(cmd.startswith("sleep") for _, cmd in processes_of_uids({uid})))
        assert run_engine(engine().cli, "kill", name).returncode == 0
        t.join(timeout=120)
        assert not t.is_alive() and len(results) == 1
        r = results[0]
        assert r.status is Status.OK and r.stdout == "done\n", r
        assert b.workers[0].starts == 2


@pytest.fixture
def switchable_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Path, str]]:
    """``GYMFORGE_DOCKER`` is a wrapper of the real CLI that fails like a stopped engine
    while the returned flag file exists; also returns the real CLI."""
    real = engine().cli
    flag = tmp_path / "engine-stopped"
    wrapper = tmp_path / "engine"
    wrapper.write_text(
        f'#!/bin/sh\nif [ -e {flag} ]; then echo "engine stopped" >&2; exit 125; fi\n'
        f'exec {real} "$@"\n'
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("GYMFORGE_DOCKER", str(wrapper))
    yield flag, real
    _probe.cache_clear()


def test_an_engine_that_stops_gives_internal_errors_then_recovers(
    switchable_engine: tuple[Path, str],
) -> None:
    flag, real = switchable_engine
    with DockerBackend(workers=1, image=IMAGE_PYTHON, uid_base=UID_BASE + 7) as b:
        assert b.engine.cli.endswith("engine")
        ok = SandboxJob(source="print('up')", limits=LIMITS)
        assert b.run(ok).stdout == "up\n"
        flag.touch()
        name = b.launcher.container(b.runtime, 0)
        assert run_engine(real, "rm", "-f", "-t", "0", name).returncode == 0
        r = b.run(ok)
        assert r.status is Status.INTERNAL_ERROR and not r.ok, r
        assert "did not start" in (r.error or ""), r.error
        assert r.exit_code is None and r.stdout == ""
        os.unlink(flag)
        assert b.run(ok).stdout == "up\n"


def test_an_image_without_the_language_is_refused_naming_the_runtime(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(IsolationUnavailableError, match=r"in c .*no 'gcc'"):
        DockerBackend(workers=1, image=IMAGE_PYTHON, languages=("c",))
    with DockerBackend(workers=1, image=IMAGE_PYTHON, uid_base=UID_BASE + 8) as b:
        job = SandboxJob(language="javascript", source="console.log(1)", limits=LIMITS)
        with pytest.raises(IsolationUnavailableError, match="no 'node'"):
            b.run(job)
        assert b.workers[0].starts == 1  # refused before any worker was asked
    monkeypatch.setenv("GYMFORGE_SANDBOX_IMAGE", IMAGE_PYTHON)
    docker = Settings(sandbox="docker")
    require_sandbox(["python"], docker)
    with pytest.raises(IsolationUnavailableError, match=r"in cpp .*no 'g\+\+'.*make containers"):
        require_sandbox(["python", "cpp"], docker)
