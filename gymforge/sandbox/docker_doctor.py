"""``gymforge sandbox doctor --sandbox docker``: is the container backend ready, measured.

Checks what ``make containers`` sets up (the engine, its runtime and cgroup manager under
gymforge's ``containers.conf``, both base images and the language runtimes in each), then,
deeply, starts a one-worker ``DockerBackend`` and runs the same probe job as the local
doctor (uid, capabilities, no_new_privs, seccomp, read-only root, writable job directory, no
network, visible pids, cgroups) plus a memory bomb and a fork bomb, which the engine's limits
must stop. Same report shape and exit code contract as ``doctor.diagnose``/``doctor_cli``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from gymforge.core.errors import GymforgeError
from gymforge.sandbox.docker import DockerBackend
from gymforge.sandbox.docker_engine import (
    CONTAINERS_CONF,
    IMAGE_FULL,
    IMAGE_PYTHON,
    SETUP_HINT,
    default_image,
    engine,
    engine_env,
    image_facts,
    run_engine,
)
from gymforge.sandbox.doctor import _deep_probe, render
from gymforge.sandbox.languages import LANGUAGES
from gymforge.sandbox.models import Limits, SandboxJob, Status

BOMB_LIMITS = Limits(wall_time=10, cpu_time=5, memory_bytes=128 << 20, processes=16)


def diagnose_docker(deep: bool = True) -> dict[str, Any]:
    """Every fact the container doctor reports, as plain data."""
    checks: list[dict[str, Any]] = []

    def check(name: str, ok: bool | None, detail: str) -> None:
        checks.append({"name": name, "ok": ok, "detail": detail})

    report: dict[str, Any] = {"checks": checks, "isolation": "none", "backend": "docker"}
    try:
        eng = engine()
    except GymforgeError as e:
        check("container engine", False, str(e))
        return report
    check("container engine", True, f"{'podman' if eng.podman else 'docker'} {eng.version}")
    conf = engine_env().get("CONTAINERS_CONF", "")
    check(
        "containers.conf",
        bool(conf),
        conf + (" (gymforge's)" if conf == str(CONTAINERS_CONF) else ""),
    )
    if eng.podman:
        p = run_engine(
            eng.cli,
            *("info", "--format", "{{.Host.OCIRuntime.Name}} {{.Host.CgroupManager}}"),
            timeout=60,
        )
        detail = p.stdout.decode().strip() or p.stderr.decode("utf-8", "replace").strip()[-200:]
        check("engine runtime, cgroup manager", p.returncode == 0, detail)
    usable = False
    for image in dict.fromkeys((IMAGE_PYTHON, IMAGE_FULL, default_image())):
        try:
            facts = image_facts(eng, image)
        except GymforgeError as e:
            check(f"image {image}", False, str(e))
            continue
        usable = usable or image == default_image()
        langs = [n for n, lang in sorted(LANGUAGES.items()) if facts.missing(lang) is None]
        check(f"image {image}", True, f"{facts.image_id[:19]}; languages: {', '.join(langs)}")
    if not usable:
        return report
    report["isolation"] = "docker"
    if deep:
        report["probe"] = _deep_probe(check, lambda: DockerBackend(workers=1))
        report["bombs"] = _bombs(check)
    return report


def _bombs(check: Any) -> dict[str, str]:
    """A memory bomb and a fork bomb in a container worker: the limits must hold."""
    out: dict[str, str] = {}
    try:
        with DockerBackend(workers=1) as b:
            mem = b.run(SandboxJob(source="x = bytearray(1 << 30)", limits=BOMB_LIMITS))
            fork = b.run(SandboxJob(source="import os\nwhile True: os.fork()", limits=BOMB_LIMITS))
    except Exception as e:
        check("engine limits hold", False, f"{type(e).__name__}: {e}")
        return out
    out = {"memory": str(mem.status), "fork": str(fork.status)}
    check("memory bomb stopped", mem.limits_hit.memory, f"1 GiB under 128 MiB: {mem.status}")
    check(
        "fork bomb stopped",
        fork.limits_hit.processes and fork.status is not Status.OK,
        f"{fork.status}, processes limit hit: {fork.limits_hit.processes}",
    )
    return out


def docker_doctor_cli(as_json: bool = False, deep: bool = True) -> int:
    """Body of ``gymforge sandbox doctor`` with the docker backend selected; 0 when it works."""
    from rich.console import Console

    report = diagnose_docker(deep=deep)
    err = Console(stderr=True, width=None if sys.stderr.isatty() else 120)
    err.print(render(report))
    ok = report["isolation"] == "docker" and all(c["ok"] is not False for c in report["checks"])
    if ok:
        err.print(
            f"[green]container sandbox available[/] (backend: docker, image {default_image()})"
        )
    else:
        err.print(f"[red]the container sandbox is not ready[/]: {SETUP_HINT}")
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2, default=str) + "\n")
    return 0 if ok else 1
