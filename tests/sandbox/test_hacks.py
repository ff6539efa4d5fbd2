"""Known reward hacks against the sandbox layer: each is contained and reported as facts."""

from __future__ import annotations

import threading

import pytest
from sandbox_helpers import run_py

from gymforge.sandbox import Limits, SandboxJob, Status
from gymforge.sandbox.local import LocalBackend

SHORT = Limits(
    wall_time=2,
    cpu_time=1,
    memory_bytes=256 << 20,
    output_bytes=4096,
    processes=16,
    open_files=32,
    file_size_bytes=1 << 20,
)


def short(backend: LocalBackend, source: str, **kw: object):  # type: ignore[no-untyped-def]
    return run_py(backend, source, limits=kw.pop("limits", SHORT), **kw)


@pytest.mark.parametrize(
    ("source", "code", "stderr"),
    [
        ("import sys; sys.exit(0)", 0, ""),
        ("import os; os._exit(0)", 0, ""),
        ("raise SystemExit", 0, ""),
        ("import sys; print('PASS'); sys.exit(3)", 3, ""),
        ("import os; os._exit(7)", 7, ""),
        ("exit('bye')", 1, "bye\n"),
        ("raise SystemExit(None)", 0, ""),
    ],
)
def test_exit_codes_are_reported_faithfully(
    sandbox: LocalBackend, source: str, code: int, stderr: str
) -> None:
    r = short(sandbox, source)
    assert r.exit_code == code and r.signal is None and r.stderr == stderr
    assert r.status == (Status.OK if code == 0 else Status.RUNTIME_ERROR)


def test_killing_the_parent_harms_nobody(sandbox: LocalBackend) -> None:
    starts = [w.starts for w in sandbox.workers]
    r = short(
        sandbox,
        "import os, signal\nfor s in (9, 15, 2, 19): os.kill(os.getppid(), s)\n"
        "print('still here', os.getppid())",
    )
    assert r.ok and r.stdout == "still here 1\n"
    r = short(sandbox, "import subprocess; subprocess.run(['sh', '-c', 'kill -9 -1']); print(1)")
    # kill -1 reaches the fork template too: the job fails for it; the template is replaced
    assert r.status in (Status.KILLED, Status.RUNTIME_ERROR), r
    assert r.status is Status.KILLED or "fork template" in (r.error or ""), r
    assert all(short(sandbox, "print(2)").stdout == "2\n" for _ in range(4))
    assert [w.starts for w in sandbox.workers] == starts, "no worker had to be restarted"


def test_ignoring_signals_still_times_out(sandbox: LocalBackend) -> None:
    busy = (
        "import signal\nfor s in (signal.SIGTERM, signal.SIGXCPU, signal.SIGINT):\n"
        "    signal.signal(s, signal.SIG_IGN)\nwhile True: pass"
    )
    # a roomy wall clock: on a loaded machine 2 s of CPU can take much longer than 2 s
    r = short(sandbox, busy, limits=SHORT.model_copy(update={"wall_time": 20.0}))
    assert r.status == Status.TIMEOUT and r.limits_hit.cpu_time and r.signal == 9
    sleepy = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(60)"
    r = short(sandbox, sleepy)
    assert r.status == Status.TIMEOUT and r.limits_hit.wall_time and r.signal == 9


def test_infinite_loop_and_sleep_hit_timeouts(sandbox: LocalBackend) -> None:
    r = short(sandbox, "while True: pass", limits=SHORT.model_copy(update={"wall_time": 20.0}))
    assert r.status == Status.TIMEOUT and r.limits_hit.cpu_time
    # the kill came from the CPU limit (limits_hit above); the measured figure is only reported
    assert r.cpu_time is not None and r.cpu_time > 0
    r = short(sandbox, "import time; time.sleep(30)")
    assert r.status == Status.TIMEOUT and r.limits_hit.wall_time and not r.limits_hit.cpu_time


def test_fork_bomb_is_contained_and_the_other_worker_keeps_serving(sandbox: LocalBackend) -> None:
    bomb = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
    box: dict[str, object] = {}
    started = threading.Event()

    def run_bomb() -> None:
        started.set()
        box["r"] = sandbox.run(
            SandboxJob(
                source=bomb, limits=SHORT.model_copy(update={"wall_time": 6.0, "cpu_time": 6.0})
            )
        )

    t = threading.Thread(target=run_bomb)
    t.start()
    started.wait(5)
    others = [short(sandbox, f"print({i} * 2)") for i in range(5)]
    still_running = t.is_alive()
    t.join(30)
    assert not t.is_alive()
    assert all(o.ok and o.stdout == f"{i * 2}\n" for i, o in enumerate(others))
    assert still_running, "the other worker answered while the bomb was still running"
    r = box["r"]
    assert r.status == Status.TIMEOUT and r.stray_processes > 0  # type: ignore[attr-defined]
    if sandbox.workers[0].has_pids_cgroup:
        assert r.limits_hit.processes  # type: ignore[attr-defined]
    assert (  # the zygote, the fork template and this job: nothing of the bomb is left
        short(
            sandbox, "import os; print(len([p for p in os.listdir('/proc') if p.isdigit()]))"
        ).stdout
        == "3\n"
    )


def test_thread_bomb_is_contained(sandbox: LocalBackend) -> None:
    bomb = (
        "import threading, time\nn = 0\ntry:\n    while True:\n"
        "        threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
        "        n += 1\nfinally:\n    print(n)"
    )
    # Under the default address-space limit, thread stacks and malloc arenas run out first:
    r = short(sandbox, bomb)
    assert r.status == Status.RUNTIME_ERROR and "can't start new thread" in r.stderr
    # With room to spare, the process/thread limit is what stops it:
    roomy = SHORT.model_copy(update={"memory_bytes": 4 << 30})
    r = short(sandbox, bomb, limits=roomy)
    assert r.status == Status.RUNTIME_ERROR and "can't start new thread" in r.stderr
    assert int(r.stdout) < SHORT.processes
    if sandbox.workers[0].has_pids_cgroup:
        assert r.limits_hit.processes


def test_memory_bomb_hits_the_memory_limit(sandbox: LocalBackend) -> None:
    r = short(sandbox, "x = []\nwhile True:\n    x.append(bytearray(10**6))")
    assert r.status == Status.MEMORY and r.limits_hit.memory
    r = short(sandbox, "x = ' ' * (10**10)")
    assert r.status == Status.MEMORY


def test_output_flood_is_capped(sandbox: LocalBackend) -> None:
    r = short(sandbox, "import sys\nwhile True:\n    sys.stdout.write('A' * 65536)")
    assert r.status == Status.OUTPUT_LIMIT and r.limits_hit.output and r.stdout_truncated
    assert len(r.stdout) == SHORT.output_bytes and set(r.stdout) == {"A"}
    r = short(sandbox, "import os\nwhile True:\n    os.write(2, b'E' * 65536)")
    assert r.status == Status.OUTPUT_LIMIT and r.stderr_truncated and not r.stdout_truncated


def test_segfault_is_reported_as_signal_11(sandbox: LocalBackend) -> None:
    r = short(sandbox, "import ctypes; ctypes.string_at(0)")
    assert r.signal == 11 and r.exit_code is None and r.status == Status.RUNTIME_ERROR


def test_fd_exhaustion_is_contained(sandbox: LocalBackend) -> None:
    r = short(sandbox, "fs = []\nwhile True:\n    fs.append(open('/dev/null'))")
    assert r.status == Status.RUNTIME_ERROR and r.limits_hit.open_files
    r = short(
        sandbox,
        "import os\nfs=[]\ntry:\n    while True: fs.append(os.open('/dev/null', 0))\n"
        "except OSError: print(len(fs) < 32)",
    )
    assert r.ok and r.stdout == "True\n"


def test_file_size_and_disk_filling_are_bounded(sandbox: LocalBackend) -> None:
    r = short(sandbox, "open('big', 'wb').write(b'x' * (4 << 20))")
    assert r.limits_hit.file_size and r.status == Status.RUNTIME_ERROR
    r = short(
        sandbox,
        "import os, signal\nsignal.signal(signal.SIGXFSZ, signal.SIG_DFL)\n"
        "open('big', 'wb').write(b'x' * (4 << 20))",
    )
    assert r.signal == 25 and r.limits_hit.file_size


def test_escaped_background_processes_are_killed(sandbox: LocalBackend) -> None:
    src = (
        "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
        "        time.sleep(60)\n    os._exit(0)\nprint('parent done')"
    )
    r = short(sandbox, src)
    assert r.ok and r.stray_processes >= 1


def test_huge_return_values_are_capped(sandbox: LocalBackend) -> None:
    from gymforge.sandbox import Call, CallStatus

    lim = SHORT.model_copy(update={"return_bytes": 10_000})
    r = sandbox.run(
        SandboxJob(
            source="def f(n): return 'x' * n\ndef g(): return list(range(10**6))",
            limits=lim,
            calls=[Call(name="f", args=(100,)), Call(name="f", args=(10**6,)), Call(name="g")],
        )
    )
    assert [c.status for c in r.calls or []] == [
        CallStatus.OK,
        CallStatus.TOO_LARGE,
        CallStatus.TOO_LARGE,
    ]


def test_control_channel_flood_is_cut_off(sandbox: LocalBackend) -> None:
    src = (
        "import os, struct, json\n"
        "h = json.dumps({'ev': 'test', 'pad': 'y' * 60000}).encode()\n"
        "body = struct.pack('>I', len(h)) + h\n"
        "while True:\n    os.write(3, struct.pack('>I', len(body)) + body)\n"
    )
    r = short(sandbox, src)  # a program's control pipe is read when it ends: the flood stalls
    assert r.status in (Status.RUNTIME_ERROR, Status.TIMEOUT)
    assert short(sandbox, "print('fine')").stdout == "fine\n"
    r = sandbox.run(SandboxJob(source=src, calls=[], limits=SHORT))  # read eagerly: cut off at once
    assert r.status == Status.RUNTIME_ERROR and "control frame" in (r.error or "")
