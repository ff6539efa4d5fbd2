"""Kernel knobs the zygote sets on itself, via ctypes. Standard library only (runs inside the
sandbox under ``python3 -I -S``, where site-packages such as ``seccomp`` are not importable).

- ``set_dumpable(False)``: other processes of the same uid (the jobs) cannot ptrace the zygote
  or open its ``/proc/<pid>/mem``.
- ``set_subreaper()``: orphaned job processes are re-parented to the zygote (when it is not
  already pid 1), so it can find and reap them.
- ``install_seccomp()``: an allow-by-default filter, loaded once in the zygote and inherited by
  every job (no per-job cost), that refuses syscalls no judged program needs and that widen the
  kernel attack surface: ptrace, mount and namespace calls, bpf, perf, keyrings, io_uring,
  userfaultfd, POSIX message queues (they would outlive a job), module and kexec calls.
  ``clone3`` answers ENOSYS so libc falls back to ``clone``. ``prlimit64`` works only on the
  caller (pid 0): a job of the same uid could otherwise lower the hard limits of the fork
  template or the zygote, which every later job inherits. Optional: it needs
  ``libseccomp.so.2``; when missing, the status says so and the sandbox still runs.
- ``export_seccomp(fd)``: the same filter as a BPF program written to ``fd``, for a program
  bubblewrap starts outside the zygote (``confine.py``: a confined harness).
- ``ipc_cleanup()``: removes System V shared memory, message queues and semaphores left in the
  worker's private IPC namespace, so a job cannot leave state for the next one.
- ``ipc_objects()``: how many such objects exist now (three cheap ``*_INFO`` calls), so the
  zygote can kill a job that creates thousands (the kernel allows ~68k, whose removal would
  cost the zygote a good fraction of a second after the job).
"""

from __future__ import annotations

import ctypes
import errno
import os

TYPE_CHECKING = False  # not typing's: the zygote imports no more than it needs
if TYPE_CHECKING:
    from collections.abc import Callable

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_ACT_ERRNO = 0x00050000
SCMP_CMP_NE = 1


class _ArgCmp(ctypes.Structure):  # struct scmp_arg_cmp
    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


DENY = [
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "unshare",
    "setns",
    "mount_setattr",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "keyctl",
    "add_key",
    "request_key",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "syslog",
    "quotactl",
    "open_by_handle_at",
    "name_to_handle_at",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "fanotify_init",
    "lookup_dcookie",
    "mq_open",
    "mq_unlink",
    "mq_timedsend",
    "mq_timedreceive",
    "mq_notify",
    "mq_getsetattr",
    "vhangup",
]

_libc: ctypes.CDLL | None = None


def libc() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def prctl(option: int, arg: int) -> bool:
    """``prctl(option, arg)``; whether it succeeded (``ctypes.get_errno()`` says why not)."""
    return bool(libc().prctl(option, ctypes.c_ulong(arg), 0, 0, 0) == 0)


def set_dumpable(on: bool) -> bool:
    return prctl(PR_SET_DUMPABLE, 1 if on else 0)


def set_subreaper() -> bool:
    return prctl(PR_SET_CHILD_SUBREAPER, 1)


def install_seccomp() -> str:
    """Load the deny-list filter into this process (and so into every future child).
    Returns ``"on"`` or ``"unavailable: <why>"``."""
    return _with_filter(lambda lib, ctx: ("seccomp_load", lib.seccomp_load(ctx)))


def export_seccomp(fd: int) -> str:
    """Write the same filter, as a BPF program, to ``fd`` (for ``bwrap --add-seccomp-fd``,
    which loads it into a program it starts). Returns ``"on"`` or ``"unavailable: <why>"``."""

    def export(lib: ctypes.CDLL, ctx: int) -> tuple[str, int]:
        lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
        return "seccomp_export_bpf", lib.seccomp_export_bpf(ctx, fd)

    return _with_filter(export)


def _with_filter(use: Callable[[ctypes.CDLL, int], tuple[str, int]]) -> str:
    """Build the deny-list filter and hand it to ``use`` (which returns the name of the call
    it made and that call's return code)."""
    try:  # not ctypes.util.find_library: it would pull subprocess, tempfile and random in
        lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
    except OSError as e:
        return f"unavailable: {e}"
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint]
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(_ArgCmp),
    ]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    ctx = lib.seccomp_init(SCMP_ACT_ALLOW)
    if not ctx:
        return "unavailable: seccomp_init failed"
    try:
        rules = [(n, errno.EPERM) for n in DENY] + [("clone3", errno.ENOSYS)]
        for syscall, err in rules:
            nr = lib.seccomp_syscall_resolve_name(syscall.encode())
            if nr < 0:
                continue  # not on this architecture
            rc = lib.seccomp_rule_add(ctx, SCMP_ACT_ERRNO | err, nr, 0)
            if rc != 0:
                return f"unavailable: rule {syscall}: {os.strerror(-rc)}"
        nr = lib.seccomp_syscall_resolve_name(b"prlimit64")
        if nr >= 0:  # another process's limits (pid != 0): refused
            cmp = _ArgCmp(0, SCMP_CMP_NE, 0, 0)
            rc = lib.seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO | errno.EPERM, nr, 1, cmp)
            if rc != 0:
                return f"unavailable: rule prlimit64: {os.strerror(-rc)}"
        call, rc = use(lib, ctx)
        if rc != 0:
            return f"unavailable: {call}: {os.strerror(-rc)}"
    finally:
        lib.seccomp_release(ctx)
    return "on"


_IPC = (("shm", "shmctl"), ("msg", "msgctl"), ("sem", "semctl"))
IPC_RMID = 0


# (call, SHM/MSG/SEM_INFO, index of the in-use count: shm_info.used_ids, msginfo.msgpool,
# seminfo.semusz)
IPC_INFO_CMDS = (("shmctl", 14, 0), ("msgctl", 12, 0), ("semctl", 19, 7))


def ipc_objects() -> int:
    """System V IPC objects in this IPC namespace (three ``*_INFO`` calls, no listing)."""
    total = 0
    buf = (ctypes.c_int * 64)()  # larger than struct shm_info, msginfo and seminfo
    for fn, cmd, index in IPC_INFO_CMDS:
        ctypes.memset(buf, 0, ctypes.sizeof(buf))
        if fn == "semctl":
            rc = libc().semctl(0, 0, cmd, ctypes.byref(buf))
        else:
            rc = getattr(libc(), fn)(0, cmd, ctypes.byref(buf))
        if rc >= 0:
            total += buf[index]
    return total


def _read_all(path: str) -> bytes:
    """The whole of a /proc file (a single read returns at most one chunk of it: a job can
    create ~64k IPC objects, megabytes of listing)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def ipc_cleanup() -> int:
    """Remove every System V IPC object visible in this IPC namespace; returns the count."""
    removed = 0
    for kind, fn in _IPC:
        try:
            rows = _read_all(f"/proc/sysvipc/{kind}").decode().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            parts = row.split()
            if len(parts) < 2:
                continue
            ident = int(parts[1])
            if kind == "sem":
                rc = libc().semctl(ident, 0, IPC_RMID, 0)
            else:
                rc = getattr(libc(), fn)(ident, IPC_RMID, None)
            removed += rc == 0
    return removed
