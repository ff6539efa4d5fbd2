"""How a worker's zygote is started: the bubblewrap command line (the default) or a bare process
(``--unsafe-no-isolation``); containers are ``docker.DockerLauncher``. Also the host-side
runtime directory.

The bubblewrap worker, from the outside in:

1. ``sh`` (as root, before anything else): puts its own pid into the worker's memory and pids
   cgroups and lowers its ``oom_score_adj`` (inherited by the zygote; jobs raise theirs to
   1000), then ``exec``s:
2. ``setpriv --reuid=U --regid=U --clear-groups --no-new-privs``: the worker's own unprivileged
   uid (``uid_base + index``), so ``RLIMIT_NPROC`` means something and a fork bomb in one worker
   cannot starve another; no-new-privs also lets the zygote load seccomp without privileges;
3. ``bwrap --unshare-all --unshare-user --disable-userns --die-with-parent --new-session
   --as-pid-1 --cap-drop ALL``: fresh user, pid, network (created once per worker, not per
   job), ipc, uts and cgroup namespaces; no capabilities; no nested user namespaces. The root
   is an empty tmpfs remounted read-only, holding read-only binds of ``/usr`` (with the merged
   ``/bin``, ``/lib``... symlinks) and ``/etc``, a fresh ``/proc``, a minimal read-only
   ``/dev``, the read-only ``/.gymforge`` (zygote code), and ``/tmp/job``: a size-capped
   tmpfs, the only writable place. The host's home, repository, datasets, ``/tmp`` and the
   compiled-artefact cache are not mounted at all (a job gets its own compiled program as a
   file in its directory, nothing else of the cache).
4. ``python3 -I -S /.gymforge/zygote.py``: the zygote, pid 1 of the namespace.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from gymforge.settings import host_tool

ZYGOTE_FILES = (
    "zygote.py",
    "wire.py",
    "plainvalues.py",
    "pinned_builtins.py",
    "stdvalues.py",
    "child.py",
    "child_calls.py",
    "jobproc.py",
    "jail.py",
    "callservice.py",
    "warmup.py",
    "landlock.py",
    "jobdir.py",
    "template.py",
    "zygote_cleanup.py",
)
HERE = Path(__file__).resolve().parent
SYSTEM_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
}


@dataclass(frozen=True)
class SandboxPaths:
    """Where the zygote sees things (inside the sandbox, or host paths when unisolated)."""

    jobdir: str
    libdir: str


class Runtime:
    """A private host directory: ``lib/`` (a copy of the zygote's files, readable by the
    sandbox uids wherever gymforge is installed) and ``w<i>/`` per worker."""

    def __init__(self) -> None:
        remove_stale_runtimes()
        self.root = Path(tempfile.mkdtemp(prefix=f"gymforge-sb-{os.getpid()}-"))
        os.chmod(self.root, 0o755)
        self.lib = self.root / "lib"
        self.lib.mkdir(mode=0o755)
        for name in ZYGOTE_FILES:
            shutil.copyfile(HERE / name, self.lib / name)
            os.chmod(self.lib / name, 0o644)

    def worker_dir(self, index: int) -> Path:
        d = self.root / f"w{index}"
        for sub, mode in (("", 0o755), ("job", 0o700)):
            p = d / sub if sub else d
            p.mkdir(exist_ok=True)
            os.chmod(p, mode)
        return d

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def tool_path(name: str) -> str | None:
    """The ``bwrap`` or ``setpriv`` the sandbox uses: the path in ``GYMFORGE_BWRAP`` /
    ``GYMFORGE_SETPRIV`` when set, else the one on ``PATH``; ``None`` when it is missing."""
    override = host_tool(name)
    if override:
        return override if os.access(override, os.X_OK) else None
    return shutil.which(name)


def remove_stale_runtimes() -> None:
    """Delete runtime directories of gymforge processes that died without cleaning up."""
    base = Path(tempfile.gettempdir())
    for d in base.glob("gymforge-sb-*-*"):
        pid = d.name.split("-")[2]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists() and d.stat().st_uid == os.getuid():
            shutil.rmtree(d, ignore_errors=True)


def isolation_args() -> list[str]:
    """The bubblewrap flags every sandbox starts with: all namespaces unshared (no network),
    no nested user namespaces, pid 1 of its own session, no capabilities, and the system
    directories read-only (symlinked ones, as on merged-/usr systems, recreated as links)."""
    args = [
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--as-pid-1",
        "--cap-drop",
        "ALL",
        "--ro-bind",
        "/usr",
        "/usr",
        "--ro-bind",
        "/etc",
        "/etc",
    ]
    for d in SYSTEM_DIRS:
        p = Path("/") / d
        if p.is_symlink():
            args += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            args += ["--ro-bind", str(p), str(p)]
    return args


def zygote_config(
    paths: SandboxPaths,
    seccomp: bool,
    own_ipc: bool | None = None,
    preimport: tuple[str, ...] = (),
    preimport_path: tuple[str, ...] = (),
) -> str:
    cfg: dict[str, object] = {
        "jobdir": paths.jobdir,
        "seccomp": seccomp,
    }
    if own_ipc is not None:
        cfg["own_ipc"] = own_ipc
    if preimport:
        cfg["preimport"] = list(preimport)
        cfg["preimport_path"] = list(preimport_path)
    return json.dumps(cfg)


def trampoline(procs_files: list[str], oom_adj: int | None) -> list[str]:
    """``sh`` prefix that joins cgroups and sets ``oom_score_adj`` before exec'ing the rest."""
    steps = [f"echo $$ > {shlex.quote(f)}" for f in procs_files]
    if oom_adj is not None:
        steps.append(f"echo {oom_adj} > /proc/self/oom_score_adj")
    if not steps:
        return []
    script = "; ".join(f"{{ {s}; }} 2>/dev/null" for s in steps) + '; exec "$@"'
    return ["/bin/sh", "-c", script, "sh"]


@dataclass
class BwrapLauncher:
    """Builds the per-worker bubblewrap command (see the module docstring)."""

    python: str = "/usr/bin/python3"
    uid_base: int = 60000
    seccomp: bool = True
    jobdir_bytes: int = 256 << 20
    ro_binds: tuple[tuple[str, str], ...] = ()
    preimport: tuple[str, ...] = ()
    """Trusted modules the fork template imports (from ``preimport_path``, paths inside the
    jail such as ``ro_binds`` targets) before any job: every job then starts with them
    imported, in a copy of its own."""
    preimport_path: tuple[str, ...] = ()
    bwrap: str = field(default_factory=lambda: tool_path("bwrap") or "bwrap")
    setpriv: str = field(default_factory=lambda: tool_path("setpriv") or "setpriv")
    name: str = "local"
    isolated: bool = True

    def paths(self, runtime: Runtime, index: int) -> SandboxPaths:
        return SandboxPaths("/tmp/job", "/.gymforge")

    def uid(self, index: int) -> int:
        """The worker's uid: ``uid_base + index`` as root; otherwise our own uid (we cannot
        switch, and bubblewrap then runs unprivileged as us)."""
        return self.uid_base + index if os.getuid() == 0 else os.getuid()

    def command(self, runtime: Runtime, index: int) -> list[str]:
        uid = self.uid(index)
        paths = self.paths(runtime, index)
        drop = [f"--reuid={uid}", f"--regid={uid}", "--clear-groups"] if os.getuid() == 0 else []
        cmd = [
            self.setpriv,
            *drop,
            "--no-new-privs",
            "--",
            self.bwrap,
            *isolation_args(),
        ]
        py_root = _outside_usr(self.python)
        if py_root:
            cmd += ["--ro-bind", py_root, py_root]
        for src, dst in self.ro_binds:
            cmd += ["--ro-bind", src, dst]
        cmd += [
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--perms",
            "0755",
            "--tmpfs",
            "/tmp",
            "--perms",
            "0700",
            "--size",
            str(self.jobdir_bytes),
            "--tmpfs",
            paths.jobdir,
            "--ro-bind",
            str(runtime.lib),
            paths.libdir,
            "--remount-ro",
            "/tmp",
            "--remount-ro",
            "/dev",
            "--remount-ro",
            "/",
            "--hostname",
            "gymforge",
            "--chdir",
            paths.jobdir,
            "--clearenv",
        ]
        for k, v in BASE_ENV.items():
            cmd += ["--setenv", k, v]
        cmd += [
            self.python,
            "-I",
            "-S",
            f"{paths.libdir}/zygote.py",
            zygote_config(paths, self.seccomp, None, self.preimport, self.preimport_path),
        ]
        return cmd


def _outside_usr(python: str) -> str | None:
    """The install prefix of an interpreter that does not live under /usr (it must be bound)."""
    real = os.path.realpath(python)
    if real.startswith("/usr/"):
        return None
    return str(Path(real).parent.parent)


@dataclass
class UnsafeLauncher:
    """No isolation at all: the zygote runs as this user, rlimits and process-group kills only.
    Job directories are host directories under the runtime dir."""

    python: str = "/usr/bin/python3"
    seccomp: bool = False
    name: str = "unsafe"
    isolated: bool = False

    def paths(self, runtime: Runtime, index: int) -> SandboxPaths:
        wdir = runtime.worker_dir(index)
        return SandboxPaths(str(wdir / "job"), str(runtime.lib))

    def uid(self, index: int) -> int:
        return os.getuid()

    def command(self, runtime: Runtime, index: int) -> list[str]:
        paths = self.paths(runtime, index)
        return [
            "env",
            "-i",
            *(f"{k}={v}" for k, v in BASE_ENV.items()),
            self.python,
            "-I",
            "-S",
            f"{paths.libdir}/zygote.py",
            zygote_config(paths, self.seccomp, own_ipc=False),
        ]
