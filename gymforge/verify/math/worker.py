"""The zygote and its workers (child-process side of the pool).

The pool starts one *zygote* with ``python -c`` (a clean interpreter: no threads, no state of
the parent), which imports sympy once, warms it up and then only forks. Each worker is a fork
of the zygote, so it starts in milliseconds with everything imported. The zygote talks to
the pool over a ``SOCK_SEQPACKET`` control socket, one ``wire`` frame per datagram:

- ``spawn`` (with the worker's socket passed as ``SCM_RIGHTS``): fork a worker, reply its pid;
- ``reap``: SIGKILL a worker and reap it. The zygote reaps *only* on request, so a pid the
  pool holds can never be reused by another process while the pool may still signal it;
- ``exit``, or end of stream (the pool's process died): kill and reap every worker, exit.

A worker says ``ready``, then serves one job at a time on its own stream socket, in the
sandbox's ``wire`` frames (the host side is ``sandbox.prefork``, the plumbing the sandbox's
workers use too), and dies with the zygote (``PR_SET_PDEATHSIG``). Its address space is
capped (``RLIMIT_AS``).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import resource
import select
import signal
import socket
import sys
import time
from typing import Any

from gymforge.sandbox import wire

MAX_FRAME = 64 * 1024 * 1024  # the largest job or reply either side accepts

_WARMUP = [
    ("\\frac{1}{2}", "0.5"), ("x^2+2x+1", "(x+1)^2"), ("(1, 2]", "(1,2]"),
    ("\\{1,2\\}", "\\{2,1\\}"), ("(-\\infty,1)\\cup(2,\\infty)", "x>2"), ("\\sqrt{8}", "2\\sqrt2"),
    ("1.5707963", "\\frac{\\pi}{2}"), ("y=2x+1", "2x-y=-1"), ("5\\text{ m}", "5\\text{ m}"),
    ("\\begin{pmatrix}1\\\\2\\end{pmatrix}", "(1,2)"), ("e^{i\\pi}", "-1"),
    ("\\frac{x^2-1}{x-1}", "x+1"), ("\\sin^2 x+\\cos^2 x", "1"),
    ("\\sqrt{5+2\\sqrt6}", "\\sqrt2+\\sqrt3"),
]  # fmt: skip
_WARMUP_FORMS = [
    ("\\frac{3\\sqrt{2}}{4}", "simplest_radical"),
    ("-\\frac{3}{4}", "reduced_fraction"),
]


UNEVALUATED = "the task asks for a number; the answer is a computation left to the verifier"


def verify_job(job: dict[str, Any]) -> dict[str, Any]:
    """Run one ``verify`` job: the form of the answer when ``form`` names one, the check
    that the other final answers (strict mode sends them) agree with it, then the answer.
    When ``form`` asks for a number (``form.NUMBER_FORMS``), or ``number`` says the task
    does, an answer of the gold's value that is not a number written out
    (``form.written_number``) is ``unevaluated``. A residue written with its modulus
    (``5 \\pmod{7}``) is read as the residue (``residue.residue_of``)."""
    from gymforge.verify.math.equiv import is_equivalent, parse_gold
    from gymforge.verify.math.form import NUMBER_FORMS, check_form, written_number
    from gymforge.verify.math.residue import residue_of

    if not job.get("cache_gold", True):
        parse_gold.cache_clear()
    gold: str = job["gold"]
    answers: list[str] = [residue_of(a, gold) for a in job["answers"]]
    rel_tol = float(job.get("rel_tol", 1e-9))
    approx = bool(job.get("approx_gold", False))
    out: dict[str, Any] = {}
    try:
        last = answers[0]
        if job.get("form"):
            try:
                out["form_ok"], out["form_detail"] = check_form(last, job["form"])
            except Exception as e:  # a bug in the form check must not decide the value
                out["form_ok"], out["form_detail"] = False, f"internal: {type(e).__name__}"
        for other in answers[1:]:
            if not is_equivalent(other, last, rel_tol).equal:
                detail = "different final answers (strict)"
                return {**out, "equal": False, "reason": "hedged", "detail": detail}
        r = is_equivalent(last, gold, rel_tol, approx_gold=approx)
        asks_number = job.get("form") in NUMBER_FORMS or job.get("number") is True
        if r.equal and asks_number and not written_number(last):
            return {**out, "equal": False, "reason": "unevaluated", "detail": UNEVALUATED}
        return {**out, "equal": r.equal, "reason": r.reason, "detail": r.detail}
    except (MemoryError, RecursionError):
        return {
            **out,
            "equal": False,
            "reason": "too_large",
            "detail": "out of memory or recursion",
        }
    except Exception as e:  # a verifier bug must not kill the worker
        detail = f"internal: {type(e).__name__}"
        return {**out, "equal": False, "reason": "parse_error", "detail": detail}


def _worker_loop(fd: int, hooks: bool) -> None:
    stream = wire.FrameStream(fd, MAX_FRAME)
    wire.write_all(fd, wire.pack_frame({"ev": "ready", "pid": os.getpid()}))
    while True:
        try:
            job, _ = stream.recv()
        except wire.FrameError:
            return
        op = job.get("op")
        if op == "verify":
            out = verify_job(job)
        elif op == "ping":
            out = {"ok": True, "pid": os.getpid()}
        elif hooks and op == "sleep":  # test-only: "touch" tells the test the job has started
            if job.get("touch"):
                open(job["touch"], "w").close()
            time.sleep(float(job["seconds"]))
            out = {"ok": True}
        elif hooks and op == "segfault":
            ctypes.string_at(0)  # SIGSEGV, on purpose
            out = {}
        else:
            out = {"error": f"unknown op {op!r}"}
        wire.write_all(fd, wire.pack_frame(out))


def _set_pdeathsig() -> None:
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


def _limit_memory(extra_mb: int) -> None:
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/statm") as f:
            vsize = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        limit = vsize + extra_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _child(ctl: socket.socket, fd: int, req: dict[str, Any], zygote_pid: int) -> None:
    code = 0
    try:
        ctl.close()
        _set_pdeathsig()
        if os.getppid() != zygote_pid:
            return
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        _limit_memory(int(req.get("memory_mb", 2048)))
        gc.unfreeze()
        _worker_loop(fd, bool(req.get("hooks")))
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def zygote_main(ctl_fd: int) -> None:
    """Entry point of the zygote process (see the module docstring)."""
    from gymforge.verify.math.equiv import is_equivalent
    from gymforge.verify.math.form import check_form

    for a, g in _WARMUP:
        is_equivalent(a, g)
    for a, form in _WARMUP_FORMS:
        check_form(a, form)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    ctl = socket.socket(fileno=ctl_fd)
    children: set[int] = set()
    pending: set[int] = set()
    gc.collect()
    gc.freeze()  # workers share these pages copy-on-write
    ctl.send(wire.pack_frame({"ev": "ready", "pid": os.getpid()}))
    try:
        while True:
            ready, _, _ = select.select([ctl], [], [], 0.05 if pending else None)
            _reap(pending, children, block=False)
            if not ready:
                continue
            data, fds, _, _ = socket.recv_fds(ctl, 65536, 1)
            if not data:
                return
            try:
                req, _ = wire.unpack_frame(data)
            except wire.FrameError:
                req = {}
            cmd = req.get("cmd")
            if cmd == "spawn" and fds:
                me = os.getpid()
                pid = os.fork()
                if pid == 0:
                    _child(ctl, fds[0], req, me)
                os.close(fds[0])
                children.add(pid)
                ctl.send(wire.pack_frame({"pid": pid}))
            elif cmd == "reap":
                pid = int(req["pid"])
                if pid in children:
                    _kill(pid)
                    pending.add(pid)
                    _reap(pending, children, block=False)
                ctl.send(wire.pack_frame({"ok": True}))
            elif cmd == "exit":
                break
            else:
                for fd in fds:
                    os.close(fd)
                ctl.send(wire.pack_frame({"error": "bad request"}))
    finally:
        for pid in children:
            _kill(pid)
        _reap(set(children), children, block=True)
        with contextlib.suppress(OSError):
            ctl.send(wire.pack_frame({"ok": True}))


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _reap(pending: set[int], children: set[int], block: bool) -> None:
    for pid in list(pending):
        try:
            done, _ = os.waitpid(pid, 0 if block else os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done == pid:
            pending.discard(pid)
            children.discard(pid)


if __name__ == "__main__":
    zygote_main(int(sys.argv[1]))
