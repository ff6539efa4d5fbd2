"""Backend behaviour: batch and async forms, concurrency, worker death and respawn, host-side
kill, cleanup after close / at interpreter exit / when the host is killed, and the refusal to
run without isolation."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from sandbox_helpers import FAST, UID_BASE, children_of, processes_of_uids, run_py

from gymforge.sandbox import (
    Backend,
    IsolationUnavailableError,
    Limits,
    SandboxJob,
    Status,
    get_backend,
)
from gymforge.sandbox.doctor import bwrap_works
from gymforge.sandbox.local import LocalBackend, UnsafeBackend

pytestmark = pytest.mark.skipif(not bwrap_works()[0], reason="bubblewrap sandbox unavailable")
REPO = Path(__file__).resolve().parents[2]


def zygote_host_pid(backend: LocalBackend, index: int) -> int:
    proc = backend.workers[index].proc
    assert proc is not None
    for pid in children_of(proc.pid):
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        if b"zygote.py" in cmd and cmd.startswith(b"/usr"):
            return pid
    raise AssertionError("zygote not found")


def wait_until_gone(uids: set[int], timeout: float = 10.0) -> list[tuple[int, str]]:
    end = time.monotonic() + timeout
    while (left := processes_of_uids(uids)) and time.monotonic() < end:
        time.sleep(0.05)
    return left


def test_run_many_is_ordered_and_uses_every_worker(sandbox: LocalBackend) -> None:
    assert isinstance(sandbox, Backend)
    jobs = [SandboxJob(source=f"print({i} * {i})", limits=FAST) for i in range(40)]
    results = sandbox.run_many(jobs)
    assert [r.stdout for r in results] == [f"{i * i}\n" for i in range(40)]
    assert {r.worker for r in results} == {0, 1}


def test_async_forms(sandbox: LocalBackend) -> None:
    async def main() -> list[str]:
        one = await sandbox.arun(SandboxJob(source="print('a')", limits=FAST))
        many = await sandbox.arun_many(
            [SandboxJob(source=f"print({i})", limits=FAST) for i in range(10)]
        )
        return [one.stdout] + [r.stdout for r in many]

    assert asyncio.run(main()) == ["a\n"] + [f"{i}\n" for i in range(10)]


def test_many_threads_share_two_workers(sandbox: LocalBackend) -> None:
    out: list[str] = []
    lock = threading.Lock()

    def go(i: int) -> None:
        r = run_py(sandbox, f"print({i})")
        with lock:
            out.append(r.stdout)

    threads = [threading.Thread(target=go, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(out) == sorted(f"{i}\n" for i in range(12))


def test_worker_death_gives_internal_error_and_a_respawn() -> None:
    with LocalBackend(workers=1, uid_base=UID_BASE + 20, host_grace=2.0) as b:
        box: dict[str, object] = {}
        t = threading.Thread(
            target=lambda: box.update(
                r=b.run(
                    SandboxJob(source="import time; time.sleep(30)", limits=Limits(wall_time=30))
                )
            )
        )
        idle = len(processes_of_uids({UID_BASE + 20}))
        t.start()
        end = time.monotonic() + 30
        while len(processes_of_uids({UID_BASE + 20})) <= idle:  # until the job's process runs
            assert time.monotonic() < end, "the job never started"
            time.sleep(0.02)
        os.kill(zygote_host_pid(b, 0), signal.SIGKILL)
        t.join(30)
        r = box["r"]
        assert r.status == Status.INTERNAL_ERROR and "died" in (r.error or "")  # type: ignore[attr-defined]
        assert run_py(b, "print('back')").stdout == "back\n"
        assert b.workers[0].starts == 2


def test_unresponsive_worker_is_killed_from_the_host() -> None:
    with LocalBackend(workers=1, uid_base=UID_BASE + 30, host_grace=1.0) as b:
        zpid = zygote_host_pid(b, 0)
        os.kill(zpid, signal.SIGSTOP)
        t = time.monotonic()
        r = b.run(SandboxJob(source="print(1)", limits=Limits(wall_time=0.5)))
        assert r.status == Status.TIMEOUT and "host" in (r.error or "")
        assert time.monotonic() - t < 20
        assert run_py(b, "print('fresh')").stdout == "fresh\n"


def test_close_leaves_nothing_behind() -> None:
    uids = {UID_BASE + 40, UID_BASE + 41}
    b = LocalBackend(workers=2, uid_base=UID_BASE + 40)
    assert run_py(b, "print(1)").ok
    root = b.runtime.root
    cgroup_dirs = [p for w in b.workers if w.cgroup for _, p in w.cgroup.dirs.values()]
    assert processes_of_uids(uids)
    b.close()
    b.close()  # idempotent
    assert wait_until_gone(uids) == []
    assert not root.exists() and not any(d.exists() for d in cgroup_dirs)


SCRIPT = """
import sys, time
sys.path.insert(0, {repo!r})
from gymforge.sandbox.local import LocalBackend
from gymforge.sandbox import SandboxJob
b = LocalBackend(workers=2, uid_base={base})
job = SandboxJob(source="import subprocess; subprocess.Popen(['sleep', '60']); print('ok')")
print(b.run(job).stdout, flush=True)
if {hang}:
    time.sleep(60)
"""


@pytest.mark.parametrize("how", ["exit", "sigkill"])
def test_no_process_survives_the_host(how: str) -> None:
    base = UID_BASE + (50 if how == "exit" else 60)
    uids = {base, base + 1}
    code = textwrap.dedent(SCRIPT.format(repo=str(REPO), base=base, hang=how == "sigkill"))
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "ok"
        if how == "sigkill":
            assert processes_of_uids(uids)
            p.kill()
        p.wait(30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait(10)
    assert wait_until_gone(uids) == []


def test_refuses_to_run_without_isolation(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    import gymforge.sandbox.doctor as doctor

    monkeypatch.setattr(doctor, "bwrap_works", lambda: (False, "simulated: no bwrap"))
    with pytest.raises(IsolationUnavailableError, match="--unsafe-no-isolation"):
        get_backend("local")
    with pytest.raises(IsolationUnavailableError):
        get_backend("unsafe")
    with get_backend("local", unsafe_no_isolation=True, workers=1) as b:
        assert isinstance(b, UnsafeBackend)
        assert "WITHOUT ISOLATION" in capfd.readouterr().err
        r = b.run(SandboxJob(source="import os; print(os.getcwd() != '/tmp/job')", limits=FAST))
        assert r.ok and r.stdout == "True\n"
        r = b.run(
            SandboxJob(
                source="import os\nif os.fork() == 0:\n    import time; time.sleep(60)\n",
                limits=FAST,
            )
        )
        assert r.ok and r.stray_processes == 1
