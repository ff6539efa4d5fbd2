"""Which Docker-compatible CLI drives the backend: podman itself, the ``podman-docker`` shim
(the Docker CLI's flags, podman underneath), but never a Docker client talking to podman's API
socket, which reports exit code 0 for every ``--rm`` container and ``OOMKilled=false`` after
an OOM kill: that pairing is refused in one line."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from containers_helpers import CONTAINERS, UID_BASE

from gymforge.sandbox import IsolationUnavailableError, Limits, SandboxJob, Status
from gymforge.sandbox.docker import DockerBackend
from gymforge.sandbox.docker_engine import IMAGE_PYTHON, _probe, engine, engine_env, run_engine

pytestmark = CONTAINERS

SHIM = "/usr/bin/docker"


def _flavour(cli: str | None) -> str:
    if cli is None or not os.access(cli, os.X_OK):
        return ""
    p = subprocess.run([cli, "--version"], capture_output=True, text=True, timeout=30, check=False)
    return p.stdout.strip().lower()


@pytest.fixture
def fresh_probe() -> Iterator[None]:
    _probe.cache_clear()
    yield
    _probe.cache_clear()


@pytest.mark.skipif(not _flavour(SHIM).startswith("podman"), reason="no podman-docker shim")
def test_the_podman_docker_shim_drives_the_backend(
    monkeypatch: pytest.MonkeyPatch, fresh_probe: None
) -> None:
    monkeypatch.setenv("GYMFORGE_DOCKER", SHIM)
    with DockerBackend(workers=1, image=IMAGE_PYTHON, uid_base=UID_BASE + 9) as b:
        assert b.engine.cli == SHIM and b.engine.podman
        r = b.run(SandboxJob(source="import os; print(os.getuid())", limits=Limits(wall_time=5)))
        assert r.status is Status.OK and r.stdout == f"{UID_BASE + 9}\n", r


def _docker_client() -> str | None:
    for d in os.environ.get("PATH", "").split(os.pathsep):
        cand = os.path.join(d, "docker")
        if _flavour(cand).startswith("docker version"):
            return cand
    return None


@pytest.mark.skipif(_docker_client() is None, reason="no Docker client installed")
def test_a_docker_client_on_podmans_api_socket_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_probe: None
) -> None:
    sock = tmp_path / "podman.sock"
    service = subprocess.Popen(
        [engine().cli, "system", "service", "--time=0", f"unix://{sock}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=engine_env(),
    )
    try:
        deadline = time.monotonic() + 30
        while not sock.exists():
            assert time.monotonic() < deadline and service.poll() is None, "no API socket"
            time.sleep(0.05)
        client = _docker_client()
        assert client is not None
        monkeypatch.setenv("DOCKER_HOST", f"unix://{sock}")
        monkeypatch.setenv("GYMFORGE_DOCKER", client)
        assert run_engine(client, "version").returncode == 0  # it does answer...
        with pytest.raises(IsolationUnavailableError, match=r"podman's API.*misreports"):
            DockerBackend(workers=1, image=IMAGE_PYTHON)  # ...and is refused
    finally:
        service.kill()
        service.wait(timeout=30)
