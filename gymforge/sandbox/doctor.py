"""``gymforge sandbox doctor``: which isolation works on this machine, measured, not assumed.

``diagnose()`` returns structured facts; ``render()`` makes a table; ``doctor_cli()`` is the
body of the CLI command (JSON on stdout with ``--json``, the table on stderr; exit code 0 when
the default sandbox works, 1 otherwise). The deep check starts a real one-worker
``LocalBackend`` and runs a probe job inside it, so what it reports is what jobs get.
"""

from __future__ import annotations

import ctypes.util
import functools
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from gymforge.sandbox.cgroups import discover
from gymforge.sandbox.docker import docker_available
from gymforge.sandbox.landlock import landlock_abi
from gymforge.sandbox.languages import LANGUAGES, tool_version
from gymforge.sandbox.launch import BASE_ENV, isolation_args, tool_path
from gymforge.settings import host_tool

PROBE = r"""
import os, socket
st = dict(l.split(':', 1) for l in open('/proc/self/status') if ':' in l)
def can_write(p):
    try:
        open(p, 'w').close(); os.unlink(p); return True
    except OSError:
        return False
def can_connect(addr):
    try:
        socket.create_connection(addr, timeout=1).close(); return True
    except OSError:
        return False
print({'uid': os.getuid(), 'cap_eff': st['CapEff'].strip(), 'nnp': st['NoNewPrivs'].strip(),
       'seccomp': st['Seccomp'].strip(),
       'pids': len([p for p in os.listdir('/proc') if p.isdigit()]),
       'write_etc': can_write('/etc/gf_probe'), 'write_jobdir': can_write('gf_probe'),
       'net_ifaces': [l.split(':')[0].strip() for l in open('/proc/net/dev').readlines()[2:]],
       'connect': can_connect(('1.1.1.1', 53))})
"""
READ_ONLY_PROBE = r"""
import os
try:
    open('f', 'w').close(); print('written', end=' ')
except PermissionError:
    print('refused', end=' ')
open(os.path.join(os.environ['TMPDIR'], 't'), 'w').close(); print('ok')
"""


def _run(cmd: list[str], timeout: float = 20) -> tuple[int, str]:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
        return p.returncode, (p.stdout + p.stderr).strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        return -1, str(e)


def _bwrap_probe_cmd(extra: list[str]) -> list[str]:
    bwrap = tool_path("bwrap") or "bwrap"
    setpriv = tool_path("setpriv")
    pre = []
    if os.getuid() == 0 and setpriv:
        pre = [
            setpriv,
            "--reuid=60000",
            "--regid=60000",
            "--clear-groups",
            "--no-new-privs",
            "--",
        ]
    cmd = [*pre, bwrap, *isolation_args(), "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    # the sandbox's own environment, as the workers get it (the host's PATH means nothing there)
    cmd += ["--clearenv", "--setenv", "PATH", BASE_ENV["PATH"]]
    return cmd + extra


@functools.lru_cache(maxsize=1)
def bwrap_works() -> tuple[bool, str]:
    """Can the default sandbox start here? (cached per process)"""
    if not tool_path("bwrap"):
        where = host_tool("bwrap")
        if where:
            return False, f"GYMFORGE_BWRAP={where} is not an executable bubblewrap"
        return False, "bubblewrap (bwrap) is not installed (apt-get install bubblewrap)"
    if os.getuid() == 0 and not tool_path("setpriv"):
        return False, "setpriv is not installed (apt-get install util-linux)"
    rc, out = _run(_bwrap_probe_cmd(["/bin/sh", "-c", "cat /proc/net/dev"]))
    if rc != 0:
        return False, f"bwrap failed: {out[-300:]}"
    return True, "ok"


def diagnose(deep: bool = True) -> dict[str, Any]:
    """Every fact ``doctor`` reports, as plain data."""
    checks: list[dict[str, Any]] = []

    def check(name: str, ok: bool | None, detail: str) -> None:
        checks.append({"name": name, "ok": ok, "detail": detail})

    bwrap = tool_path("bwrap")
    check(
        "bwrap installed",
        bool(bwrap),
        f"{bwrap} ({tool_version((bwrap, '--version'))})" if bwrap else "missing",
    )
    ok, why = bwrap_works()
    check("bwrap sandbox starts", ok, why)
    check(
        "running as root",
        os.getuid() == 0,
        "per-worker uids via setpriv"
        if os.getuid() == 0
        else "workers share your uid (no per-worker RLIMIT_NPROC separation)",
    )
    try:
        maxns = int(Path("/proc/sys/user/max_user_namespaces").read_text())
    except (OSError, ValueError):
        maxns = -1
    check("user namespaces", maxns != 0 and ok, f"max_user_namespaces={maxns}")
    rc, out = _run(_bwrap_probe_cmd(["/bin/sh", "-c", "cat /proc/net/dev"])) if ok else (1, "")
    ifaces = [ln.split(":")[0].strip() for ln in out.splitlines()[2:]] if rc == 0 else []
    check("network namespaces", rc == 0 and ifaces == ["lo"], f"interfaces inside: {ifaces}")
    setpriv = tool_path("setpriv")
    check("setpriv", bool(setpriv), tool_version((setpriv, "--version")) if setpriv else "missing")
    lib = ctypes.util.find_library("seccomp")
    mods = [m for m in ("seccomp", "pyseccomp") if importlib.util.find_spec(m)]
    check(
        "seccomp (libseccomp)",
        bool(lib),
        f"{lib or 'libseccomp not found'}; python modules: {mods or 'none (ctypes is used)'}",
    )
    abi = landlock_abi()
    check(
        "landlock",
        abi >= 1,
        f"ABI {abi}: read-only job files (swe's post-submit hidden tests)"
        if abi
        else "not enabled in this kernel: jobs asking for read-only files fail",
    )
    cg = discover()
    for ctrl in ("memory", "pids"):
        h = cg.get(ctrl)
        check(f"cgroup {ctrl}", bool(h), f"v{h.version} at {h.base}" if h else "not writable")
    docker_ok, docker_why = docker_available()
    check("docker engine", docker_ok, docker_why)
    ray_spec = importlib.util.find_spec("ray")
    check("ray", bool(ray_spec), "importable" if ray_spec else "not installed")
    languages = {}
    for name, lang in sorted(LANGUAGES.items()):
        cmd = lang.version
        if name == "python":
            from gymforge.sandbox.local import default_python

            cmd = (default_python(), "--version")
        languages[name] = tool_version(cmd) or None
        check(f"language {name}", bool(languages[name]), languages[name] or "not installed")
    report: dict[str, Any] = {
        "checks": checks,
        "languages": languages,
        "isolation": "bwrap" if ok else "none",
    }
    if deep and ok:
        report["probe"] = _deep_probe(check)
    return report


def _deep_probe(check: Any, make_backend: Any = None) -> dict[str, Any]:
    """Run ``PROBE`` in a one-worker backend (``make_backend()``, default a ``LocalBackend``)
    and check what a job sees there."""
    from gymforge.sandbox.local import LocalBackend
    from gymforge.sandbox.models import SandboxJob

    try:
        with (make_backend or (lambda: LocalBackend(workers=1)))() as b:
            info = b.worker_info()[0]
            r = b.run(SandboxJob(source=PROBE))
            ro = None
            if landlock_abi() >= 1:
                ro = b.run(
                    SandboxJob(source=READ_ONLY_PROBE, files={"f": ""}, read_only_files=True)
                )
    except Exception as e:
        check("zygote job runs", False, f"{type(e).__name__}: {e}")
        return {}
    if not r.ok:
        check("zygote job runs", False, f"{r.status}: {r.stderr[-300:]} {r.error or ''}")
        return {}
    import ast

    facts = ast.literal_eval(r.stdout.strip())
    check("zygote job runs", True, f"python {info.get('python')} as pid {info.get('pid')}")
    check("job uid unprivileged", facts["uid"] != 0, f"uid {facts['uid']}")
    check("job capabilities empty", int(facts["cap_eff"], 16) == 0, f"CapEff={facts['cap_eff']}")
    check("job no_new_privs", facts["nnp"] == "1", f"NoNewPrivs={facts['nnp']}")
    check("job seccomp filter", facts["seccomp"] == "2", f"zygote: {info.get('seccomp')}")
    check("job cannot write /etc", not facts["write_etc"], "read-only root")
    check("job can write its dir", facts["write_jobdir"], "tmpfs job directory")
    check(
        "job has no network",
        not facts["connect"] and facts["net_ifaces"] == ["lo"],
        f"interfaces {facts['net_ifaces']}",
    )
    check("job sees only its pids", facts["pids"] <= 3, f"{facts['pids']} pids visible")
    if ro is not None:
        check(
            "job files read-only on request",
            ro.ok and ro.stdout.strip() == "refused ok",
            "landlock in the job" if ro.ok else f"{ro.status}: {ro.error or ro.stderr[-200:]}",
        )
    check(
        "worker cgroups",
        bool(info.get("cgroups")),
        ", ".join(info.get("cgroups") or []) or "none (rlimits only)",
    )
    return {"worker": info, "job": facts}


def render(report: dict[str, Any]) -> Any:
    from rich.table import Table

    table = Table(title="gymforge sandbox doctor", title_justify="left")
    table.add_column("check")
    table.add_column("ok", justify="center")
    table.add_column("detail", overflow="fold")
    for c in report["checks"]:
        mark = {True: "[green]yes[/]", False: "[red]no[/]", None: "-"}[c["ok"]]
        table.add_row(c["name"], mark, c["detail"])
    return table


def doctor_cli(as_json: bool = False, deep: bool = True) -> int:
    """Body of ``gymforge sandbox doctor``: table on stderr, JSON on stdout with ``as_json``.
    Returns the exit code: 0 when the isolated sandbox works here, 1 otherwise."""
    from rich.console import Console

    report = diagnose(deep=deep)
    err = Console(stderr=True, width=None if sys.stderr.isatty() else 120)
    err.print(render(report))
    if report["isolation"] == "bwrap":
        err.print("[green]isolated sandbox available[/] (backend: local)")
    else:
        err.print(
            "[red]no isolation available[/]: gymforge refuses to run untrusted code "
            "unless you pass --unsafe-no-isolation"
        )
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2, default=str) + "\n")
    return 0 if report["isolation"] == "bwrap" else 1
