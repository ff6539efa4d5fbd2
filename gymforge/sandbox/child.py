"""The job child: what runs between ``fork()`` in the fork template (``template.py``, which
never holds job data) and the untrusted code.
Standard library only (copied into the sandbox next to ``zygote.py`` and ``wire.py``).

Contract, in order. Pre-fork (before the job is known): new session and process group; default
signal dispositions; stdin/stdout/stderr on fds 0-2, the control channel on fd 3 (``CTL_FD``),
commands on fd 4 (``CMD_FD``), every other fd closed; ``RLIMIT_CORE`` 0; ``oom_score_adj`` 1000
so the OOM killer picks the job, never the zygote; cwd in the job directory; if no job
arrives within ``WARM_AFTER``, a warm-up of trusted code (``warmup``). Then the child
blocks until the zygote sends the job on fd 4 and applies it: rlimits with soft == hard, so
they cannot be raised again, and a fresh environment with ``HOME`` and ``TMPDIR`` in the job
directory.
Only then does untrusted code run: by ``execve`` (compiled programs, node, compilers) or, for
Python, by ``exec`` of a compiled code object in a fresh ``__main__`` module (no interpreter
start-up per job).

Trust boundary on the control channel: frames the child sends *before* the ``started`` frame
come from trusted code (set-up errors); everything after it may be forged by the candidate and
the zygote treats it as such. For ``execve`` jobs the channel is close-on-exec, so its EOF
marks a successful exec and nothing can be sent after it.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import json.decoder
import json.encoder
import os
import resource
import select
import signal
import sys
import types
from typing import TYPE_CHECKING, Any, NoReturn

# The sandbox runs these files with their own directory on sys.path (sibling imports by
# bare name); the type checker sees the same files as modules of this package.
if TYPE_CHECKING:
    from gymforge.sandbox import wire
    from gymforge.sandbox.child_calls import _call, _msg, _name
    from gymforge.sandbox.landlock import restrict_writes
    from gymforge.sandbox.warmup import warm_up
else:
    import wire
    from child_calls import _call, _msg, _name
    from landlock import restrict_writes
    from warmup import warm_up

CTL_FD = 3
CMD_FD = 4
WARM_AFTER = 0.002  # seconds without a job before a pre-forked child warms up
_RLIMITS = {
    "as": resource.RLIMIT_AS,
    "fsize": resource.RLIMIT_FSIZE,
    "nofile": resource.RLIMIT_NOFILE,
    "nproc": resource.RLIMIT_NPROC,
    "stack": resource.RLIMIT_STACK,
}


def send(header: dict[str, Any], blobs: tuple[bytes, ...] = ()) -> None:
    wire.write_all(CTL_FD, wire.pack_frame(header, blobs))


def prepare(fds: dict[str, int], jobdir: str) -> None:
    """The job-independent half of the set-up, done while the zygote is idle (pre-fork).
    Signal dispositions: the template reset all it ignores but SIGINT, SIGPIPE and SIGXFSZ
    (ignored, as CPython itself has the latter two), which the job runners restore."""
    os.setsid()
    for want, name in (
        (0, "stdin"),
        (1, "stdout"),
        (2, "stderr"),
        (CTL_FD, "ctl"),
        (CMD_FD, "cmd"),
    ):
        os.dup2(fds[name], want, inheritable=want < 3)
    os.closerange(CMD_FD + 1, 1 << 16)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    try:
        fd = os.open("/proc/self/oom_score_adj", os.O_WRONLY)
        try:
            os.write(fd, b"1000")
        finally:
            os.close(fd)
    except OSError:
        pass
    os.chdir(jobdir)
    os.umask(0o022)


def _cmd_waiting(timeout: float = 0.0) -> bool:
    return bool(select.select([CMD_FD], [], [], timeout)[0])


def apply(job: dict[str, Any]) -> None:
    """The job-specific half: rlimits (soft == hard: they cannot be raised again), env
    (changed key by key: the zygote's own environment is usually what a job needs already)
    and, for a ``read_only_files`` job, Landlock (``landlock.restrict_writes``): nothing
    under the job directory but its scratch directory can change from here on."""
    lim = job["rlimits"]
    for key, which in _RLIMITS.items():
        if lim.get(key) is not None:
            resource.setrlimit(which, (lim[key], lim[key]))
    if lim.get("cpu") is not None:
        resource.setrlimit(resource.RLIMIT_CPU, (lim["cpu"], lim["cpu"] + 1))
    env, cur = job["env"], os.environ
    for k in [k for k in cur if k not in env]:
        del cur[k]
    for k, v in env.items():
        if cur.get(k) != v:
            cur[k] = v
    if job.get("writable") is not None:  # read_only_files: last, once nothing else writes
        restrict_writes(job["writable"])


def run_exec(job: dict[str, Any]) -> NoReturn:
    """Replace the child with ``job["argv"]``; the control fd closes on success."""
    os.set_inheritable(CMD_FD, False)
    os.close(CMD_FD)
    for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT):
        signal.signal(sig, signal.SIG_DFL)
    argv = job["argv"]
    try:
        os.execve(argv[0], argv, dict(os.environ))
    except OSError as e:
        send({"ev": "setup_error", "msg": f"exec {argv[0]}: {e}"})
        os._exit(127)


class _Quitter:
    """``exit()``/``quit()`` as ``site`` defines them (the zygote runs with ``-S``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Use {self.name}() to exit"

    def __call__(self, code: Any = None) -> NoReturn:
        raise SystemExit(code)


def install_builtins() -> None:
    """Run once in the zygote: ``exit``/``quit`` for every future child."""
    builtins.exit = _Quitter("exit")  # type: ignore[assignment]
    builtins.quit = _Quitter("quit")  # type: ignore[assignment]


def _python_env(job: dict[str, Any], jobdir: str, main_path: str, importable: bool) -> None:
    """Make this forked interpreter look like a fresh ``python3 main.py`` process."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # The interpreter's own std streams, opened on fds 0-2 at start-up and never used by the
    # zygote (it speaks through os.read/os.write), now point at the job's pipes.
    sys.stdin, sys.stdout, sys.stderr = sys.__stdin__, sys.__stdout__, sys.__stderr__
    sys.argv = [main_path, *job["argv"]]
    sys.path[:] = ([jobdir] if importable else []) + list(job["stdlib_path"])
    if job.get("seed") is not None:
        import random

        random.seed(job["seed"])
    os.set_inheritable(CTL_FD, False)
    os.set_inheritable(CMD_FD, False)


def _fresh_main(path: str) -> types.ModuleType:
    mod = types.ModuleType("__main__")
    mod.__file__ = path
    mod.__builtins__ = builtins  # type: ignore[attr-defined]
    sys.modules["__main__"] = mod
    return mod


def _exit_code(e: SystemExit) -> int:
    code = e.code
    if code is None:
        return 0
    if isinstance(code, int):  # bool and int subclasses too, like CPython
        return int.__index__(code) & 0xFF
    with contextlib.suppress(BaseException):
        print(code, file=sys.stderr)
    return 1


def _finish(rc: int, exc: BaseException | None) -> NoReturn:
    """CPython's shutdown order: join non-daemon threads, atexit, flush. Then report."""
    try:
        threading = sys.modules.get("threading")
        if threading is not None:
            threading._shutdown()
    except BaseException:
        pass
    try:
        import atexit

        atexit._run_exitfuncs()
    except BaseException:
        pass
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):
            stream.flush()
    if exc is not None:
        info: dict[str, Any] = {"ev": "exception", "etype": _name(exc)}
        if isinstance(exc, OSError):
            info["errno"] = exc.errno if type(exc.errno) is int else None
        with contextlib.suppress(BaseException):
            send(info)
    os._exit(rc)


def run_program(job: dict[str, Any], source: bytes, jobdir: str) -> NoReturn:
    """``python3 main.py`` semantics, exit code included, without starting an interpreter."""
    path = os.path.join(jobdir, job["main"])
    _python_env(job, jobdir, path, importable=True)
    mod = _fresh_main(path)
    send({"ev": "started"})
    exc: BaseException | None = None
    try:
        code = compile(source, path, "exec")
        exec(code, mod.__dict__)
        rc = 0
    except SystemExit as e:
        rc = _exit_code(e)
    except BaseException as e:
        exc = e
        rc = 1
        try:
            import traceback

            traceback.print_exception(e)
        except BaseException:
            pass
    _finish(rc, exc)


def _load(
    source: bytes, path: str, prelude: str = "", postlude: str = ""
) -> tuple[types.ModuleType | None, dict[str, Any]]:
    """The candidate as module ``solution``; a ``prelude`` (the task's own module code: a
    HumanEval prompt, MBPP imports) runs first in the same namespace, a ``postlude`` (MBPP
    set-up code) after it."""
    mod = _fresh_main(path)
    mod.__name__ = "solution"
    sys.modules["solution"] = mod  # what ``dataclasses`` and ``pickle`` look a class's module up by
    try:
        if prelude:
            exec(compile(prelude, "<task module>", "exec"), mod.__dict__)
        exec(compile(source, path, "exec"), mod.__dict__)
        if postlude:
            exec(compile(postlude, "<task set-up>", "exec"), mod.__dict__)
    except BaseException as e:
        return None, {"ev": "loaded", "ok": False, "etype": _name(e), "msg": _msg(e)}
    return mod, {"ev": "loaded", "ok": True}


def run_calls(job: dict[str, Any], source: bytes, jobdir: str) -> NoReturn:
    """Function-call service: load the candidate once, answer the batch of calls that came
    with the job (in order, one result frame each), then answer call frames from fd 4.

    Each reply is ``{"ev": "result", "id", "status"}`` with status ``ok`` (blob: plain JSON of
    the return value), ``exception`` (``etype``, ``msg``) or ``unserialisable``. Arguments
    arrive as plain JSON ``[args, kwargs]`` and are rebuilt as fresh builtin objects.
    """
    path = os.path.join(jobdir, job["main"])
    _python_env(job, jobdir, path, importable=False)
    send({"ev": "started"})
    mod, loaded = _load(source, path, job.get("prelude") or "", job.get("postlude") or "")
    send(loaded)
    if mod is None:
        _finish(1, None)
    max_bytes = int(job["return_bytes"])
    blobs = job.get("_blobs") or []
    kept: dict[int, Any] = {}
    for c in job.get("calls") or []:  # batch: every call arrived with the job; stream answers
        send(*_call(mod, c, [blobs[c["blob"]]], max_bytes, kept))
    stream = job["_stream"]
    while True:
        try:
            hdr, args = stream.recv()
        except wire.FrameError:  # the zygote closed the pipe: the session is over
            _finish(0, None)
        send(*_call(mod, hdr, args, max_bytes, kept))


def main(fds: dict[str, int], jobdir: str) -> NoReturn:
    """Entry point after ``fork()``: prepare, then wait for the job frame on fd 4 (the zygote
    pre-forks this child before the job is known). Never returns; set-up failures exit 127."""
    try:
        prepare(fds, jobdir)
        if not _cmd_waiting(WARM_AFTER):  # warm up only a worker that is idle, not a busy one
            warm_up(_cmd_waiting)
        stream = wire.FrameStream(CMD_FD)
        hdr, blobs = stream.recv()
        if hdr.get("op") != "job":
            os._exit(0)
        job, source = hdr["job"], blobs[0]
        job["_blobs"], job["_stream"] = blobs, stream
        apply(job)
        mode = job["mode"]
        if mode == "exec":
            run_exec(job)
        runner = {"program": run_program, "calls": run_calls}[mode]
        runner(job, source, jobdir)
    except BaseException as e:
        try:
            send({"ev": "setup_error", "msg": f"{_name(e)}: {_msg(e)}"})
        finally:
            os._exit(127)
    os._exit(127)


# Before any candidate runs (see ``pinned_builtins.pin_builtins``): this module and the codec's
# standard-library helpers keep the real builtins.
for _ns in (globals(), json.__dict__, json.encoder.__dict__, json.decoder.__dict__):
    wire.pin_builtins(_ns)
