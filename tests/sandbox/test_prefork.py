"""The one pre-forked worker mechanism (``gymforge.sandbox.prefork``) on real processes: the
ready handshake, deadlines, kill on garbage or death, health between requests, back-pressure,
respawn and shutdown. The sandbox's and the math verifier's own tests cover their workers."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gymforge.core.errors import InfraError
from gymforge.sandbox import wire
from gymforge.sandbox.prefork import FramedWorker, WorkerDied, WorkerPool

ECHO = Path(__file__).with_name("prefork_echo.py")
WIRE = Path(wire.__file__)


class EchoWorker(FramedWorker):
    label = "echo worker"

    def __init__(self, index: int, mode: str = "ok") -> None:
        super().__init__(index, ready_timeout=20.0)
        self.mode = mode
        self.proc: subprocess.Popen[bytes] | None = None

    def _launch(self) -> tuple[int, int]:
        cmd = [sys.executable, "-I", "-S", str(ECHO), self.mode, str(WIRE)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        return self.proc.stdin.fileno(), self.proc.stdout.fileno()

    def _running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def interrupt(self) -> None:
        if self.proc is not None:
            self.proc.kill()

    def _terminate(self) -> None:
        p, self.proc = self.proc, None
        if p is not None:
            p.kill()
            p.wait(timeout=10)
            for f in (p.stdin, p.stdout):
                if f is not None:
                    f.close()

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_request_round_trip_with_blobs() -> None:
    w = EchoWorker(0)
    w.start()
    try:
        hdr, blobs = w.request({"op": "echo", "n": 1}, [b"a", b"\x00" * 70_000], timeout=20)
        assert hdr["n"] == 1 and hdr["pid"] == w.pid
        assert blobs == [b"\x00" * 70_000, b"a"]
        assert w.healthy() and w.starts == 1
    finally:
        w.kill()


def test_deadline_kills_the_worker_and_start_makes_it_usable_again() -> None:
    w = EchoWorker(0)
    w.start()
    pid = w.pid
    w.send({"op": "sleep", "seconds": 60})
    with pytest.raises(TimeoutError):
        w.recv(time.monotonic() + 0.2)
    assert not w.alive and _gone(pid)
    with pytest.raises(WorkerDied, match="not running"):
        w.send({"op": "echo"})
    w.start()
    try:
        assert w.request({"op": "echo"}, [], timeout=20)[0]["pid"] != pid and w.starts == 2
    finally:
        w.kill()


@pytest.mark.parametrize("op", ["garbage", "die"])
def test_garbage_or_death_mid_request_kills_the_worker(op: str) -> None:
    w = EchoWorker(0)
    w.start()
    pid = w.pid
    with pytest.raises(WorkerDied, match="echo worker 0 died"):
        w.request({"op": op}, [], timeout=20)
    assert not w.alive and _gone(pid)


@pytest.mark.parametrize(("mode", "why"), [("noready", "did not start"), ("badready", "first")])
def test_a_worker_that_does_not_say_ready_is_refused(mode: str, why: str) -> None:
    w = EchoWorker(0, mode)
    with pytest.raises(WorkerDied, match=why):
        w.start()
    assert not w.alive and w.proc is None


def test_acquire_bounds_concurrency_to_the_workers() -> None:
    pool = WorkerPool([EchoWorker(i) for i in range(2)], "echo")
    pool.start()
    holders: set[int] = set()
    peak = 0
    lock = threading.Lock()
    errors: list[BaseException] = []

    def use() -> None:
        nonlocal peak
        try:
            with pool.acquire() as w:
                with lock:
                    assert w.index not in holders  # never two holders of one worker
                    holders.add(w.index)
                    peak = max(peak, len(holders))
                w.request({"op": "sleep", "seconds": 0.02}, [], timeout=20)
                with lock:
                    holders.discard(w.index)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=use) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    pool.close()
    assert errors == [] and peak == 2


def test_a_worker_that_died_or_spoke_while_idle_is_replaced_before_use() -> None:
    pool = WorkerPool([EchoWorker(0)], "echo")
    pool.start()
    try:
        with pool.acquire() as w:
            first = w.pid
        w.interrupt()  # dies while idle
        assert w.proc is not None and w.proc.wait(timeout=10) != 0
        with pool.acquire() as w:
            second = w.pid
            assert second != first and w.starts == 2
            w.request({"op": "chatter"}, [], timeout=20)  # leaves a frame nobody asked for
        with pool.acquire() as w:
            assert w.pid != second and w.starts == 3
            assert w.request({"op": "echo"}, [], timeout=20)[0]["op"] == "echo"
    finally:
        pool.close()


def test_a_worker_killed_in_use_is_restarted_before_its_next_holder() -> None:
    pool = WorkerPool([EchoWorker(0)], "echo")
    pool.start()
    try:
        with pool.acquire() as w, pytest.raises(TimeoutError):
            w.request({"op": "sleep", "seconds": 60}, [], timeout=0.1)
        with pool.acquire() as w:  # waits for the restart on the spawner thread
            assert w.alive and w.starts == 2
    finally:
        pool.close()


def test_close_interrupts_a_busy_worker_and_refuses_new_holders() -> None:
    workers = [EchoWorker(i) for i in range(2)]
    pool = WorkerPool(workers, "echo", wait_step_s=0.05)
    pool.start()
    pids = [w.pid for w in workers]
    got: list[BaseException] = []
    started = threading.Event()

    def hold() -> None:
        with pool.acquire() as w:
            w.send({"op": "sleep", "seconds": 60})
            started.set()
            try:
                w.recv(time.monotonic() + 60)
            except BaseException as e:
                got.append(e)

    t = threading.Thread(target=hold)
    t.start()
    assert started.wait(30)
    pool.close()
    t.join(timeout=30)
    assert not t.is_alive() and len(got) == 1 and isinstance(got[0], WorkerDied)
    assert all(_gone(p) for p in pids) and not any(w.alive for w in workers)
    with pytest.raises(InfraError, match="closed"):
        pool.acquire().__enter__()
    pool.close()  # idempotent


def test_a_strict_start_that_fails_closes_the_pool() -> None:
    good, bad = EchoWorker(0), EchoWorker(1, "noready")
    pool = WorkerPool([good, bad], "echo")
    with pytest.raises(WorkerDied, match="echo worker 1 did not start"):
        pool.start()
    assert pool.closed and not good.alive


def test_a_lenient_start_retries_a_failed_worker_on_first_use() -> None:
    w = EchoWorker(0, "noready")
    pool = WorkerPool([w], "echo")
    pool.start(strict=False)
    try:
        w.mode = "ok"  # whatever kept it from starting is gone
        with pool.acquire() as got:
            assert got is w and w.alive and w.starts == 1
    finally:
        pool.close()


@pytest.mark.parametrize(("lifo", "expected"), [(False, [0, 1, 0, 1]), (True, [1, 1, 1, 1])])
def test_which_idle_worker_is_handed_out(lifo: bool, expected: list[int]) -> None:
    """Round robin by default (a sandbox worker's housekeeping after a job overlaps the next
    job on another worker); with ``lifo`` the worker used last (warm caches)."""
    pool = WorkerPool([EchoWorker(i) for i in range(2)], "echo", lifo=lifo)
    pool.start()
    try:
        got = []
        for _ in range(4):
            with pool.acquire() as w:
                got.append(w.index)
        assert got == expected
    finally:
        pool.close()
