"""One long-running program confined by bubblewrap: the ``harness-cmd:`` policy's sandbox.

Unlike the zygote pool (short jobs, no network), a confined program is an outside agent that
runs for a whole episode and must reach its endpoints on the host's loopback network. What
it gets, from the outside in:

- **Its own user.** As root, ``bwrap`` (root, no user namespace) builds the mounts, then
  ``setpriv --reuid=U --regid=U --clear-groups --no-new-privs --inh-caps=-all
  --bounding-set=-all`` drops to the unprivileged uid ``U`` before the program starts (root
  builds the mounts so that a program under a root-only directory, e.g. a virtualenv in
  ``/root``, can be bound; the program itself never holds a capability). As any other user,
  ``bwrap --unshare-user --disable-userns --cap-drop ALL`` runs it as that user in a user
  namespace of its own (no uid to switch to).
- **Its own pid, IPC, UTS and cgroup namespaces**, no controlling terminal
  (``--new-session``). No process outside is visible, so none can be signalled, traced or
  read through ``/proc``. ``bwrap``'s reaper is pid 1: when the program exits, or ``bwrap``
  is killed, or the process that started it dies (``--die-with-parent``), the kernel kills
  every process of the namespace. Nothing it started outlives it.
- **A filesystem built from an allow-list.** An empty root, read-only: the system
  directories (``/usr``, ``/etc``, the ``/bin``... links), fresh ``/proc`` and ``/dev``, a
  private size-capped ``/tmp``, the host paths it is given read-only (``read_only``, at the
  same place), and its writable directories (``writable``). ``hidden`` paths that fall inside
  a bound one are covered by an empty read-only directory (or ``/dev/null`` for a file).
- **An environment built from an allow-list**: exactly ``env``, nothing inherited.
- **The jail's seccomp filter** (``jail.export_seccomp``, loaded by bubblewrap before the
  program starts, when ``libseccomp`` is installed): no ptrace, no mount or namespace calls
  (so no nested user namespace, which the root path above cannot otherwise disable), no
  bpf, perf, keyrings, io_uring.
- **The host's network namespace** (``share_net``): it can reach any service listening on
  the host's loopback, and the host's abstract unix sockets. Everything else is unshared.
"""

from __future__ import annotations

import functools
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from gymforge.sandbox.jail import export_seccomp
from gymforge.sandbox.launch import SYSTEM_DIRS, tool_path
from gymforge.settings import host_tool

DEFAULT_UID = 63000  # apart from the local backend's 60000+ and the container backend's 62000+
TMP_BYTES = 64 << 20


@dataclass(frozen=True)
class Confinement:
    """What a confined program sees (module docstring). Paths are absolute host paths."""

    env: dict[str, str]
    chdir: str
    read_only: tuple[str, ...] = ()
    writable: tuple[tuple[str, str], ...] = ()  # (host path, path inside)
    hidden: tuple[str, ...] = ()
    uid: int = DEFAULT_UID
    share_net: bool = True
    tmp_bytes: int = TMP_BYTES
    bwrap: str = field(default_factory=lambda: tool_path("bwrap") or "bwrap")
    setpriv: str = field(default_factory=lambda: tool_path("setpriv") or "setpriv")

    def command(self, argv: list[str], seccomp_fd: int | None = None) -> list[str]:
        """The command line that runs ``argv`` confined; ``seccomp_fd``: an open file holding
        the filter to load (:func:`seccomp_fd`; pass it to the child)."""
        as_root = os.getuid() == 0
        cmd = [self.bwrap, "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
        cmd += ["--unshare-cgroup-try", "--die-with-parent", "--new-session"]
        if not as_root:
            cmd += ["--unshare-user", "--disable-userns", "--cap-drop", "ALL"]
        if not self.share_net:
            cmd += ["--unshare-net"]
        cmd += _system_mounts()
        cmd += ["--proc", "/proc", "--dev", "/dev"]
        cmd += ["--perms", "1777", "--size", str(self.tmp_bytes), "--tmpfs", "/tmp"]
        made: set[str] = {"/tmp"}
        links: dict[str, str] = {}
        bound = _unique(
            tuple(_real(p, links) for p in _unique(self.read_only) if os.path.exists(p))
        )
        for path in bound:
            cmd += [*_parents(path, made), "--ro-bind", path, path]
        for link, target in links.items():  # the symlinks on the way to a bound path
            if not _system(link) and not any(_inside(link, b) for b in bound):
                cmd += [*_parents(link, made), "--symlink", target, link]
        for host, inside in self.writable:
            cmd += [*_parents(inside, made), "--bind", host, inside]
        for path in _unique(tuple(os.path.realpath(h) for h in self.hidden)):
            if os.path.exists(path) and any(_inside(path, r) for r in bound):
                if os.path.isdir(path):
                    cmd += ["--perms", "0555", "--tmpfs", path, "--remount-ro", path]
                else:
                    cmd += ["--ro-bind", "/dev/null", path]
        # the working directory, empty where nothing bound holds it (a fresh /tmp does not)
        mounted = [*bound, *(inside for _, inside in self.writable)]
        if self.chdir not in made and not any(_inside(self.chdir, p) for p in mounted):
            cmd += [*_parents(self.chdir, made), "--perms", "0555", "--dir", self.chdir]
        cmd += ["--remount-ro", "/", "--chdir", self.chdir, "--clearenv"]
        for k, v in sorted(self.env.items()):
            cmd += ["--setenv", k, v]
        if seccomp_fd is not None:
            cmd += ["--add-seccomp-fd", str(seccomp_fd)]
        cmd += ["--"]
        if as_root:
            cmd += [self.setpriv, f"--reuid={self.uid}", f"--regid={self.uid}"]
            cmd += ["--clear-groups", "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all"]
            cmd += ["--"]
        return cmd + argv


def _system_mounts() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for d in SYSTEM_DIRS:
        p = Path("/") / d
        if p.is_symlink():
            args += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            args += ["--ro-bind", str(p), str(p)]
    return args


def _parents(path: str, made: set[str]) -> list[str]:
    """``--dir`` for each missing ancestor of ``path``, traversable by any uid (bubblewrap
    would otherwise create them ``0700``, closed to the unprivileged user)."""
    out: list[str] = []
    for parent in reversed(Path(path).parents):
        p = str(parent)
        if p == "/" or p in made or _system(p):
            continue
        made.add(p)
        out += ["--perms", "0755", "--dir", p]
    return out


def _real(path: str, links: dict[str, str], depth: int = 0) -> str:
    """``path`` with every symlink on the way resolved; each one met is added to ``links``
    (link path -> its target, as written), so the sandbox can recreate the way there."""
    here = "/"
    for part in Path(path).parts[1:]:
        step = os.path.join(here, part)
        if os.path.islink(step) and depth < 40:
            target = os.readlink(step)
            links.setdefault(step, target)
            here = _real(os.path.normpath(os.path.join(here, target)), links, depth + 1)
        else:
            here = step
    return here


def _system(path: str) -> bool:
    return path.startswith(("/usr/", "/etc/", "/proc/", "/dev/")) or path in ("/usr", "/etc")


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _unique(paths: tuple[str, ...]) -> list[str]:
    return list(dict.fromkeys(os.path.abspath(p) for p in paths))


@functools.cache
def seccomp_program() -> bytes | None:
    """The jail's seccomp filter as a BPF program (``None`` without ``libseccomp``)."""
    fd = os.memfd_create("gymforge-seccomp")
    try:
        if export_seccomp(fd) != "on":
            return None
        os.lseek(fd, 0, os.SEEK_SET)
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


@contextmanager
def seccomp_fd() -> Iterator[int | None]:
    """A fresh file holding :func:`seccomp_program` for one bubblewrap (which reads it to the
    end), closed on exit; ``None`` without ``libseccomp``."""
    program = seccomp_program()
    if program is None:
        yield None
        return
    fd = os.memfd_create("gymforge-seccomp")
    try:
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
        yield fd
    finally:
        os.close(fd)


@functools.cache
def confinement_problem() -> str | None:
    """What stops a confined program from starting here (``None``: nothing), in one line:
    a missing ``bwrap`` or ``setpriv``, or a bubblewrap that cannot create the namespaces.
    Cached per process."""
    if not tool_path("bwrap"):
        where = host_tool("bwrap")
        if where:
            return f"GYMFORGE_BWRAP={where} is not an executable bubblewrap"
        return "bubblewrap (bwrap) is not installed (apt-get install bubblewrap)"
    if os.getuid() == 0 and not tool_path("setpriv"):
        return "setpriv is not installed (apt-get install util-linux)"
    probe = Confinement(env={"PATH": "/usr/bin:/bin"}, chdir="/tmp")
    try:
        with seccomp_fd() as fd:
            r = subprocess.run(
                probe.command(["/bin/sh", "-c", "exit 0"], fd),
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
                pass_fds=() if fd is None else (fd,),
            )
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"bubblewrap failed to start: {err}"
    if r.returncode != 0:
        return f"bubblewrap cannot confine a program here: {r.stderr.strip()[-300:]}"
    return None
