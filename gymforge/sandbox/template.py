"""The fork template: the process every job child is forked from. Standard library only.

Why: a forked child inherits its parent's whole heap, and freed memory still holds the bytes.
When the zygote forked jobs itself, a job that scanned its own memory found the previous job's
source, stdin and output (in a GRPO group, a sibling's answer), all of which the zygote had
read and relayed. The template is a *fresh interpreter* (``execve``, so it inherits no memory
of the zygote), warmed up on constant input, that never receives job data: only "fork one
child" commands carrying the child's five pipe ends (``SCM_RIGHTS``). So no job process can
inherit memory that ever held another job's bytes. The zygote keeps relaying job I/O.

Each child is forked twice (template -> short-lived middle -> child) so that it is re-parented
to the zygote (pid 1 of the namespace, or a child subreaper), which reaps it, reads its rusage
and kills it, exactly as before. The template answers each command with the child's pid once
the middle has exited, i.e. once the zygote is the parent.

Jobs run as the template's uid, so they can signal it: it ignores every signal it can, is
non-dumpable (no ``ptrace``, no ``/proc/<pid>/mem``; the seccomp filter, inherited across
``execve``, refuses ``ptrace`` and ``process_vm_readv`` besides) and holds nothing a job wants.
A job that kills or stops it anyway is failed for it (``ForkTemplate.damaged``), and the zygote
starts a new one once no job process is left (``restart``).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import select
import signal
import socket
import struct
import sys
from typing import TYPE_CHECKING, Any, NoReturn

NAMES = ("stdin", "stdout", "stderr", "ctl", "cmd")
SOCK_FD = 3
SPAWN_TIMEOUT = 2.0  # seconds the zygote waits for a pid before it replaces the template
START_TIMEOUT = 30.0  # for a new template to start and warm up (a loaded machine is slow)
_PID = struct.Struct("<q")
# Signals the template ignores (a job can send them); its children get the defaults back,
# except the three the zygote always ignored (``child.prepare``/the runners restore them).
_IGNORE = [
    s
    for s in signal.valid_signals()
    if s not in (signal.SIGKILL, signal.SIGSTOP, signal.SIGCHLD, signal.SIGCONT)
    and s < signal.SIGRTMIN
]
_KEEP_IGNORED = (signal.SIGINT, signal.SIGPIPE, signal.SIGXFSZ)
_FATAL = (1 << (signal.SIGKILL - 1)) | (1 << (signal.SIGSTOP - 1))  # what it cannot ignore


class TemplateDown(Exception):
    """The fork template died, stopped or stopped answering."""


class ForkTemplate:
    """The zygote's handle on its template process (see the module docstring)."""

    def __init__(self, cfg: dict[str, Any]) -> None:
        self.cfg = cfg
        self.pid = 0
        self.pidfd: int | None = None
        self.sock: socket.socket | None = None
        self.restarts = 0
        self.status_fd: int | None = None  # its /proc status, kept open (read per call)
        self.fault: str | None = None  # what a job had done to the template we gave up on

    def start(self) -> None:
        """``posix_spawn`` a fresh ``python3 -I -S template.py`` (no memory of the zygote)."""
        self.fault = None
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "template.py")
        argv = [sys.executable, "-I", "-S", path, json.dumps(self.cfg)]
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_DUP2, theirs.fileno(), SOCK_FD),
        ]
        try:
            self.pid = os.posix_spawn(
                sys.executable, argv, dict(os.environ), file_actions=actions, setsid=True
            )
        finally:
            theirs.close()
        self.sock = mine
        try:
            self.pidfd = os.pidfd_open(self.pid)
        except OSError:
            self.pidfd = None
        self._recv_pid(START_TIMEOUT)  # the template says it is ready (warm), with its pid

    def spawn(self, fds: dict[str, int]) -> int:
        """Fork one job child holding ``fds`` (the caller closes its copies); its pid."""
        if self.sock is None:
            raise TemplateDown("no fork template")
        try:
            socket.send_fds(self.sock, [b"f"], [fds[n] for n in NAMES])
        except OSError:
            self._give_up()
        return self._recv_pid(SPAWN_TIMEOUT)

    def _recv_pid(self, timeout: float) -> int:
        """Its next answer. On any failure the template is given up (a late answer would
        desynchronise the next spawn), after noting whether a job had killed or stopped it."""
        assert self.sock is not None
        data = b""
        if select.select([self.sock], [], [], timeout)[0]:
            with contextlib.suppress(OSError):
                data = self.sock.recv(64)
        pid = int(_PID.unpack(data)[0]) if len(data) == _PID.size else 0
        if pid > 0:
            return pid
        self._give_up()

    def _give_up(self) -> NoReturn:
        """Stop using this template, noting first whether a job had killed or stopped it."""
        why = self.damaged()
        self.stop()
        self.fault = why
        raise TemplateDown(why or "the fork template could not fork or stopped answering")

    def alive(self) -> bool:
        """Not dead (cheap: the pidfd). While alive its pid cannot be reused by a job."""
        if self.sock is None or not self.pid:
            return False
        if self.pidfd is not None:
            return not select.select([self.pidfd], [], [], 0)[0]
        return self.damaged() is None

    def usable(self) -> bool:
        return self.sock is not None and self.damaged() is None

    def damaged(self) -> str | None:
        """What a job did to the template (killed or stopped it), or None: it is fine, or
        was given up for a reason of ours (``usable`` tells)."""
        if self.sock is None:
            return self.fault
        if self.pidfd is not None and select.select([self.pidfd], [], [], 0)[0]:
            return "the fork template was killed"
        # A signal is pending from the moment kill() returns until the template takes it, and
        # a stop then shows as the state, so this sees a kill or stop the job sent just before
        # it ended; but for the instant the template is taking it (dequeued, not yet stopped),
        # neither shows: a look then says None, and the next spawn's timeout gives it up.
        try:
            if self.status_fd is None:
                self.status_fd = os.open(f"/proc/{self.pid}/status", os.O_RDONLY)
            text = os.pread(self.status_fd, 1 << 14, 0)
            state = _field(text, b"State:")[:1]
            pending = int(_field(text, b"SigPnd:"), 16) | int(_field(text, b"ShdPnd:"), 16)
        except (OSError, ValueError):
            return "the fork template was killed"
        if state in (b"Z", b"X", b"T", b"t") or pending & _FATAL:
            return "the fork template was killed or stopped"
        return None

    def stop(self) -> None:
        """Kill and reap the template (the caller reaps nothing else of ours here)."""
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.pid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)
        for fd in (self.pidfd, self.status_fd):
            if fd is not None:
                os.close(fd)
        self.pidfd = self.status_fd = None
        self.pid = 0

    def restart(self) -> None:
        """A fresh template. Call only when no job process is alive: a new interpreter is
        dumpable for a moment after ``execve``, before it makes itself non-dumpable."""
        self.stop()
        self.restarts += 1
        self.start()


def _field(text: bytes, key: bytes) -> bytes:
    """The value of ``key`` in a ``/proc/<pid>/status`` text; ValueError if missing."""
    i = text.index(b"\n" + key) + len(key) + 1
    return text[i : text.index(b"\n", i)].strip()


# ---------------------------------------------------------------------- the template itself
def _fork_child(fds: list[int], jobdir: str, main: Any) -> int:
    """Template -> middle -> child; returns the child's pid once the middle has exited (the
    zygote is then the child's parent), or -1."""
    r, w = os.pipe()
    mid = os.fork()
    if mid == 0:  # pragma: no cover - the middle never returns
        try:
            os.close(r)
            pid = os.fork()
            if pid == 0:
                os.close(w)
                for s in _IGNORE:
                    if s not in _KEEP_IGNORED:
                        signal.signal(s, signal.SIG_DFL)
                main(dict(zip(NAMES, fds, strict=True)), jobdir)
            os.write(w, _PID.pack(pid))
        finally:
            os._exit(0)
    os.close(w)
    try:
        data = os.read(r, _PID.size)
    finally:
        os.close(r)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(mid, 0)
    return int(_PID.unpack(data)[0]) if len(data) == _PID.size else -1


def main() -> None:
    cfg = json.loads(sys.argv[1])
    if TYPE_CHECKING:  # the same files as modules of this package
        from gymforge.sandbox import child, jail
        from gymforge.sandbox.warmup import warm_up
    else:  # run as a script: its siblings are imported by bare name from its own directory
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import child
        import jail
        from warmup import warm_up

        del sys.path[0]
    jail.set_dumpable(False)
    for s in _IGNORE:
        with contextlib.suppress(OSError, ValueError):
            signal.signal(s, signal.SIG_IGN)
    child.install_builtins()
    extra = [p for p in cfg.get("preimport_path", []) if p not in sys.path]
    sys.path.extend(extra)  # trusted read-only directories; every child resets its path
    for name in cfg.get("preimport", []):
        with contextlib.suppress(Exception):
            __import__(name)
    del sys.path[len(sys.path) - len(extra) :]
    warm_up(lambda: False)  # constant input only: warm pages every child then shares
    gc.collect()
    gc.freeze()  # keep the warm objects' pages shared with children (no GC writes)
    sock = socket.socket(fileno=SOCK_FD)
    sock.sendall(_PID.pack(os.getpid()))
    jobdir = cfg["jobdir"]
    while True:
        try:
            msg, fds, _flags, _addr = socket.recv_fds(sock, 16, len(NAMES))
        except OSError:
            return
        if not msg:
            return  # the zygote closed its end
        try:
            pid = _fork_child(fds, jobdir, child.main) if len(fds) == len(NAMES) else -1
        except OSError:
            pid = -1
        for fd in fds:
            os.close(fd)
        try:
            sock.sendall(_PID.pack(pid))
        except OSError:
            return


if __name__ == "__main__":
    main()
