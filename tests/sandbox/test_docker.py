"""The EXPERIMENTAL Docker backend: runs only where a Docker engine answers ``docker info``
(it does not on the machine this was written on, so here these tests skip)."""

from __future__ import annotations

import pytest

from gymforge.sandbox import Call, Limits, SandboxJob, Status
from gymforge.sandbox.docker import docker_available

OK, WHY = docker_available()
pytestmark = pytest.mark.skipif(not OK, reason=f"no Docker engine here ({WHY})")


@pytest.fixture(scope="module")
def docker():  # type: ignore[no-untyped-def]
    from gymforge.sandbox.docker import DockerBackend

    b = DockerBackend(workers=1)
    yield b
    b.close()


def test_docker_runs_python_without_network(docker) -> None:  # type: ignore[no-untyped-def]
    r = docker.run(
        SandboxJob(
            source="import socket, os\ntry:\n    socket.create_connection(('1.1.1.1',"
            " 53), timeout=2); print('net')\nexcept OSError:\n    print('nonet', "
            "os.getuid())",
            limits=Limits(wall_time=10),
        )
    )
    assert r.status == Status.OK and r.stdout.startswith("nonet") and "nonet 0" not in r.stdout


def test_docker_function_calls_and_limits(docker) -> None:  # type: ignore[no-untyped-def]
    r = docker.run(SandboxJob(source="def f(x): return (x, x)", calls=[Call(name="f", args=(2,))]))
    assert r.calls and r.calls[0].value == (2, 2)
    r = docker.run(SandboxJob(source="while True: pass", limits=Limits(wall_time=2, cpu_time=1)))
    assert r.status == Status.TIMEOUT
