"""Attacks on the fork template (``gymforge/sandbox/template.py``), the process every job child
is forked from. It runs as the jobs' uid, so a job can find it in ``/proc`` and signal it.
Whatever a job does to it must fail that job (a scored failure, never ``internal_error``), and
the next job must run as usual on a fresh template, without restarting the worker."""

from __future__ import annotations

import ast
from collections.abc import Iterator

import pytest
from sandbox_helpers import FAST, UID_BASE, run_py

from gymforge.sandbox import Call, SandboxJob, Status
from gymforge.sandbox.doctor import bwrap_works
from gymforge.sandbox.local import LocalBackend

FIND = """
import os, signal
def template():
    for p in os.listdir('/proc'):
        if p.isdigit() and b'template.py' in open(f'/proc/{p}/cmdline', 'rb').read():
            return int(p)
TPL = template()
"""


@pytest.fixture(scope="module")
def solo() -> Iterator[LocalBackend]:
    ok, why = bwrap_works()
    if not ok:
        pytest.skip(f"bubblewrap sandbox unavailable: {why}")
    b = LocalBackend(workers=1, uid_base=UID_BASE + 20, host_grace=5.0)
    yield b
    b.close()


def template_pid(b: LocalBackend) -> int:
    r = run_py(b, FIND + "print(TPL)")
    assert r.ok, r
    return int(r.stdout)


def healthy_after(b: LocalBackend, starts: int) -> None:
    """The next jobs run normally and the worker itself was never restarted."""
    for i in range(3):
        r = run_py(b, f"print({i} + 1)")
        assert r.ok and r.stdout == f"{i + 1}\n", r
    assert b.workers[0].starts == starts, "the worker had to be restarted"


@pytest.mark.parametrize("sig", ["SIGKILL", "SIGSTOP"])
def test_a_job_that_kills_or_stops_the_template_fails_and_the_worker_recovers(
    solo: LocalBackend, sig: str
) -> None:
    starts, before = solo.workers[0].starts, template_pid(solo)
    r = run_py(solo, FIND + f"os.kill(TPL, signal.{sig})\nprint('the right answer')")
    assert r.status is Status.RUNTIME_ERROR, r  # the job's doing, scored as a failure
    assert "fork template was" in (r.error or ""), r
    assert r.stdout == "the right answer\n"  # facts stay faithful; the status does not pass
    healthy_after(solo, starts)
    assert template_pid(solo) != before, "a fresh template replaced the damaged one"


def test_signals_a_template_can_ignore_do_nothing(solo: LocalBackend) -> None:
    starts, before = solo.workers[0].starts, template_pid(solo)
    sigs = "SIGTERM SIGINT SIGHUP SIGQUIT SIGUSR1 SIGUSR2 SIGALRM SIGTSTP SIGTTIN SIGPIPE"
    src = FIND + f"for s in {sigs.split()!r}: os.kill(TPL, getattr(signal, s))\nprint('ok')"
    r = run_py(solo, src)
    assert r.ok and r.stdout == "ok\n", r
    assert template_pid(solo) == before
    healthy_after(solo, starts)


def test_children_get_default_signal_dispositions(solo: LocalBackend) -> None:
    """The template ignores signals; a job must not inherit that."""
    src = "import signal\nprint([int(signal.getsignal(s)) for s in (1, 10, 15)])"
    r = run_py(solo, src)
    assert r.ok and r.stdout == "[0, 0, 0]\n", r  # SIG_DFL


PRY = """
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
out = {}
for what in ('mem', 'environ', 'maps'):
    try:
        open(f'/proc/{TPL}/{what}', 'rb').read(1)
        out[what] = 'read'
    except OSError as e:
        out[what] = e.errno
buf = ctypes.create_string_buffer(64)
class IoVec(ctypes.Structure):
    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]
local, remote = IoVec(ctypes.addressof(buf), 64), IoVec(0x400000, 64)
libc.process_vm_readv.restype = ctypes.c_ssize_t
n = libc.process_vm_readv(TPL, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
out['process_vm_readv'] = n if n >= 0 else ctypes.get_errno()
libc.ptrace.restype = ctypes.c_long
n = libc.ptrace(16, TPL, 0, 0)  # PTRACE_ATTACH
out['ptrace'] = n if n >= 0 else ctypes.get_errno()
print(out)
"""


def test_the_template_cannot_be_read_or_traced(solo: LocalBackend) -> None:
    r = run_py(solo, FIND + PRY)
    assert r.ok, r
    out = ast.literal_eval(r.stdout.strip())
    eacces, eperm = 13, 1  # non-dumpable: /proc refuses; seccomp (or the kernel) refuses
    assert out == {"mem": eacces, "environ": eacces, "maps": eacces} | {
        "process_vm_readv": eperm,
        "ptrace": eperm,
    }, out


def test_a_batch_that_kills_the_template_does_not_pass(solo: LocalBackend) -> None:
    starts = solo.workers[0].starts
    src = FIND + "def add(a, b):\n    os.kill(TPL, signal.SIGKILL)\n    return a + b\n"
    job = SandboxJob(
        source=src, calls=[Call(name="add", args=(1, 2)), Call(name="add", args=(2, 2))]
    )
    r = solo.run(job.model_copy(update={"limits": FAST}))
    assert r.status is Status.RUNTIME_ERROR, r
    assert r.calls is not None and all(c.status.value != "ok" for c in r.calls), r.calls
    assert "fork template was" in (r.error or ""), r
    healthy_after(solo, starts)


def test_a_session_that_kills_the_template_and_crashes_cannot_reload(solo: LocalBackend) -> None:
    """The second call needs a new child, from a template the job itself killed."""
    starts = solo.workers[0].starts
    src = FIND + "def die(a):\n    os.kill(TPL, signal.SIGKILL)\n    os._exit(3)\n"
    src += "def add(a, b):\n    return a + b\n"
    calls = [Call(name="die", args=(1,)), Call(name="add", args=(2, 2))]
    r = solo.run(SandboxJob(source=src, calls=calls, limits=FAST))
    assert r.status is Status.RUNTIME_ERROR, r
    assert r.calls is not None and [c.status.value for c in r.calls] != ["crashed", "ok"], r.calls
    assert r.calls[1].status.value != "ok", r.calls
    healthy_after(solo, starts)


def test_an_interactive_session_that_kills_the_template_gets_no_answer_counted(
    solo: LocalBackend,
) -> None:
    starts = solo.workers[0].starts
    src = FIND + "def add(a, b):\n    return a + b\ndef kill():\n    os.kill(TPL, signal.SIGKILL)\n"
    with solo.session(SandboxJob(source=src, limits=FAST)) as s:
        assert s.call("add", 1, 2).value == 3
        assert s.call("kill").status.value == "protocol_error"
        r = s.call("add", 2, 2)
        assert r.status.value == "protocol_error" and "fork template was" in (r.error or ""), r
    assert s.result is not None and s.result.status is Status.RUNTIME_ERROR, s.result
    healthy_after(solo, starts)


def test_a_job_cannot_lower_the_limits_later_jobs_inherit(solo: LocalBackend) -> None:
    """Same uid may ``prlimit`` another process: lowering the template's (or the zygote's,
    which a new template inherits) hard limits used to break every later job on the worker
    (``internal_error``: a child cannot raise them back). The seccomp filter refuses
    ``prlimit64`` on any process but the caller."""
    if solo.worker_info()[0]["seccomp"] != "on":
        pytest.skip("no seccomp here (libseccomp missing)")
    src = FIND + (
        "import resource\nout = []\n"
        "for who in (TPL, 1):\n    try:\n"
        "        resource.prlimit(who, resource.RLIMIT_NOFILE, (16, 16)); out.append('set')\n"
        "    except OSError as e:\n        out.append(e.errno)\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))\n"  # its own: still allowed
        "print(out, resource.getrlimit(resource.RLIMIT_NOFILE))\n"
    )
    r = run_py(solo, src)
    assert r.ok and r.stdout == "[1, 1] (64, 64)\n", r
    healthy_after(solo, solo.workers[0].starts)
