"""The container engine the ``docker`` backend drives: which CLI, its configuration, its images.

Any Docker-compatible CLI works: ``podman`` itself (preferred when installed), the
``podman-docker`` shim, or a Docker client talking to a Docker engine (``GYMFORGE_DOCKER``
picks one explicitly). Never a Docker client talking to podman's API socket: that pairing
reports exit code 0 for every ``--rm`` container and ``OOMKilled=false`` after an OOM kill, so
``engine()`` refuses it.

podman reads gymforge's own ``containers.conf`` (runc, cgroupfs, explicit default ulimits:
what a host with hybrid cgroups needs) through ``CONTAINERS_CONF``, unless the user set that
variable; the user's own configuration files are never written. ``make containers`` sets the
engine up and builds the base images (``IMAGE_PYTHON``, ``IMAGE_FULL``).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from gymforge.sandbox.backend import IsolationUnavailableError
from gymforge.sandbox.languages import Language
from gymforge.settings import container_cli, inherited_environ, sandbox_image

CLI_ENV = "GYMFORGE_DOCKER"
IMAGE_ENV = "GYMFORGE_SANDBOX_IMAGE"
IMAGE_PYTHON = "gymforge-base-python"
IMAGE_FULL = "gymforge-base-full"
CONTAINERS_CONF = Path(__file__).resolve().parent / "containers.conf"
SETUP_HINT = "run `make containers` to set up podman and the gymforge base images"


def default_image() -> str:
    """The image sandboxes run in: ``GYMFORGE_SANDBOX_IMAGE``, else the full base image (every
    language of the code judge)."""
    return sandbox_image() or IMAGE_FULL


def engine_env() -> dict[str, str]:
    """The environment engine commands run with: ours, plus gymforge's ``containers.conf``
    unless the user chose one."""
    env = inherited_environ()
    if "CONTAINERS_CONF" not in env and CONTAINERS_CONF.is_file():
        env["CONTAINERS_CONF"] = str(CONTAINERS_CONF)
    return env


def run_engine(
    cli: str, *args: str, timeout: float = 60, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    """One engine command, bounded; ``OSError`` and timeouts become a failed process."""
    try:
        return subprocess.run(
            [cli, *args],
            input=stdin,
            capture_output=True,
            timeout=timeout,
            env=engine_env(),
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return subprocess.CompletedProcess([cli, *args], 125, b"", str(e).encode())


@dataclass(frozen=True)
class Engine:
    """A working engine: the CLI's path, whether it is podman (directly or through the shim),
    and the server version it reported."""

    cli: str
    podman: bool
    version: str


def _candidates() -> list[str]:
    chosen = container_cli()
    if chosen:
        return [chosen]
    return [c for c in ("podman", "docker") if shutil.which(c)]


@functools.lru_cache(maxsize=8)
def _probe(cli: str) -> Engine | str:
    exe = shutil.which(cli) if not cli.startswith("/") else cli
    if exe is None or not os.access(exe, os.X_OK):
        return f"{cli!r} is not installed"
    p = run_engine(exe, "--version", timeout=30)
    flavour = p.stdout.decode("utf-8", "replace").strip()
    if p.returncode != 0 or not flavour:
        return f"{cli} --version failed: {p.stderr.decode('utf-8', 'replace').strip()[:200]}"
    podman_cli = flavour.lower().startswith("podman")
    p = run_engine(exe, "version", "--format", "json", timeout=30)
    text = (p.stdout or p.stderr).decode("utf-8", "replace").strip()
    if p.returncode != 0:
        return f"{cli} cannot reach an engine: {text.splitlines()[-1] if text else p.returncode}"
    try:
        info = json.loads(text)
    except json.JSONDecodeError:
        return f"{cli} version printed no JSON: {text[:200]}"
    client, server = info.get("Client") or {}, info.get("Server") or {}
    if not podman_cli and "podman" in json.dumps(server).lower():
        return (
            f"{exe} is a Docker client talking to podman's API, which misreports exit codes and "
            "OOM kills; use podman itself (GYMFORGE_DOCKER=podman)"
        )
    version = str(client.get("Version") or server.get("Version") or "?")
    return Engine(exe, podman_cli, version)


def engine() -> Engine:
    """The engine to drive, or ``IsolationUnavailableError`` in one line naming
    ``make containers``."""
    reasons = []
    for cli in _candidates() or ["podman"]:
        got = _probe(cli)
        if isinstance(got, Engine):
            return got
        reasons.append(got)
    raise IsolationUnavailableError(
        f"the docker sandbox backend has no container engine ({'; '.join(reasons)}); {SETUP_HINT}"
    )


@dataclass(frozen=True)
class ImageFacts:
    """What an image offers: its id and the absolute path of each program found in it."""

    image: str
    image_id: str
    programs: dict[str, str] = field(default_factory=dict)

    def missing(self, lang: Language) -> str | None:
        """The program ``lang`` needs that the image lacks (python jobs need ``python3``)."""
        need = "python3" if lang.kind == "python" else _tool(lang)
        return None if need is None or need in self.programs else need


def _tool(lang: Language) -> str | None:
    template = lang.compile if lang.compile is not None else lang.run
    exe = template[0] if template else ""
    return None if not exe or exe.startswith("{") else os.path.basename(exe)


def language_programs() -> list[str]:
    """Every program a registered language compiles or runs with, and ``python3``."""
    from gymforge.sandbox.languages import LANGUAGES

    names = {"python3"}
    for lang in LANGUAGES.values():
        tool = _tool(lang)
        if tool:
            names.add(tool)
    return sorted(names)


@functools.lru_cache(maxsize=16)
def _inspect(eng: Engine, image: str) -> ImageFacts | str:
    p = run_engine(eng.cli, "image", "inspect", "--format", "{{.Id}}", image, timeout=30)
    if p.returncode != 0:
        return f"image {image!r} is not there; {SETUP_HINT}"
    image_id = p.stdout.decode().strip().splitlines()[0]
    names = language_programs()
    script = 'for p in "$@"; do w=$(command -v "$p") && echo "$p $w"; done; true'
    p = run_engine(
        eng.cli,
        *("run", "--rm", "--network", "none", "--entrypoint", "/bin/sh", image),
        *("-c", script, "sh", *names),
        timeout=60,
    )
    if p.returncode != 0:
        err = p.stderr.decode("utf-8", "replace").strip()[-300:]
        return f"image {image!r} does not start a shell: {err}"
    found = dict(ln.split(" ", 1) for ln in p.stdout.decode().splitlines() if " " in ln)
    return ImageFacts(image, image_id, found)


def image_facts(eng: Engine, image: str) -> ImageFacts:
    """The image's id and programs (cached per process), or ``IsolationUnavailableError``."""
    got = _inspect(eng, image)
    if isinstance(got, str):
        raise IsolationUnavailableError(f"the docker sandbox backend cannot use {got}")
    return got


def require_languages(facts: ImageFacts, languages: list[Language]) -> None:
    """Refuse an image that lacks a runtime or compiler ``languages`` need, naming it."""
    for lang in languages:
        tool = facts.missing(lang)
        if tool is not None:
            raise IsolationUnavailableError(
                f"code in {lang.name} cannot be judged in image {facts.image!r}: it has no "
                f"{tool!r}; use {IMAGE_FULL} (built by `make containers`) or set {IMAGE_ENV}"
            )


def require_container_languages(languages: list[Language]) -> None:
    """Pre-flight of the docker backend: an engine, the image, and each language's runtime
    in it; ``IsolationUnavailableError`` in one line otherwise."""
    require_languages(image_facts(engine(), default_image()), languages)
