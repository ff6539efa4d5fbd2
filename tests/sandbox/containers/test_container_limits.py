"""The engine's own limits, each proven by a job that would exceed it: the job's rlimits are
set looser than the container's bound, so what stops it is the engine (its cgroup, its
pids limit, its tmpfs), and the worker keeps serving afterwards."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from containers_helpers import CONTAINERS, UID_BASE

from gymforge.sandbox import Limits, SandboxJob, Status
from gymforge.sandbox.docker import DockerBackend
from gymforge.sandbox.docker_engine import IMAGE_PYTHON

pytestmark = CONTAINERS

MEMORY = 192 << 20
PIDS = 32
JOBDIR = 8 << 20
LOOSE = Limits(
    wall_time=8,
    cpu_time=5,
    memory_bytes=2 << 30,
    processes=2000,
    file_size_bytes=256 << 20,
    open_files=256,
)


@pytest.fixture(scope="module")
def tight() -> Iterator[DockerBackend]:
    """One worker whose container is smaller than any job's rlimits."""
    b = DockerBackend(
        workers=1,
        image=IMAGE_PYTHON,
        uid_base=UID_BASE + 4,
        memory_bytes=MEMORY,
        pids=PIDS,
        jobdir_bytes=JOBDIR,
        host_grace=5.0,
    )
    yield b
    b.close()


def ok_after(b: DockerBackend) -> None:
    r = b.run(SandboxJob(source="print(6 * 7)", limits=LOOSE))
    assert r.status is Status.OK and r.stdout == "42\n", r


def test_memory_past_the_containers_bound_is_oom_killed_by_the_engine(tight: DockerBackend) -> None:
    r = tight.run(SandboxJob(source="x = b'\\x01' * (400 << 20)\nprint(len(x))", limits=LOOSE))
    assert r.status is Status.MEMORY and r.limits_hit.memory, r
    assert r.signal == 9 and r.stdout == ""
    ok_after(tight)


def test_the_containers_cgroup_is_tightened_per_job_never_loosened(tight: DockerBackend) -> None:
    cg = tight.workers[0].cgroup
    assert cg is not None and cg.available == ["memory", "pids"]
    tight.run(SandboxJob(source="pass", limits=LOOSE))
    mem_dir, pids_dir = cg.dirs["memory"][1], cg.dirs["pids"][1]
    assert int((mem_dir / "memory.limit_in_bytes").read_text()) <= MEMORY
    assert int((pids_dir / "pids.max").read_text()) <= PIDS
    small = Limits(wall_time=5, memory_bytes=32 << 20, processes=4)
    tight.run(SandboxJob(source="pass", limits=small))
    assert int((mem_dir / "memory.limit_in_bytes").read_text()) < MEMORY
    assert int((pids_dir / "pids.max").read_text()) < PIDS


def test_a_fork_bomb_stops_at_the_engines_pids_limit(tight: DockerBackend) -> None:
    bomb = (
        "import os, time\nn = 0\ntry:\n    while True:\n        if os.fork() == 0:\n"
        "            time.sleep(30)\n            os._exit(0)\n        n += 1\n"
        "except OSError:\n    print('stopped at', n)"
    )
    r = tight.run(SandboxJob(source=bomb, limits=LOOSE))
    assert r.limits_hit.processes, r
    assert r.stdout.startswith("stopped at ") and int(r.stdout.split()[-1]) < PIDS
    ok_after(tight)


def test_the_job_directory_is_a_size_capped_tmpfs(tight: DockerBackend) -> None:
    fill = (
        "import os\nst = os.statvfs('.')\nprint(st.f_blocks * st.f_frsize)\n"
        "try:\n    with open('big', 'wb') as f:\n        f.write(b'x' * (32 << 20))\n"
        "    print('wrote')\nexcept OSError as e:\n    print('full', e.errno)"
    )
    r = tight.run(SandboxJob(source=fill, limits=LOOSE))
    size, outcome = r.stdout.split("\n", 1)
    assert int(size) == JOBDIR and outcome.strip() == "full 28", r
    ok_after(tight)
