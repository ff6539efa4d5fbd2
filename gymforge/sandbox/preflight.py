"""Pre-flight: refuse to start work whose sandbox cannot run, before the first episode.

Without this, a machine lacking bubblewrap (or a compiler) turns every episode into a
verifier error: a run that "succeeds" with zero reward everywhere. ``require_sandbox`` checks
exactly what the process's sandbox backend will need and raises ``IsolationUnavailableError``
with one line that names what is missing and points to ``gymforge sandbox doctor``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable

from gymforge.sandbox.backend import IsolationUnavailableError
from gymforge.sandbox.docker_engine import require_container_languages
from gymforge.sandbox.languages import Language, get_language
from gymforge.settings import UNSAFE_ENV, Settings

__all__ = ["DOCTOR", "UNSAFE_ENV", "missing_tool", "require_read_only_files", "require_sandbox"]

DOCTOR = "run `gymforge sandbox doctor` to see what works here"


def missing_tool(lang: Language) -> str | None:
    """The program ``lang`` needs that is not installed (its compiler, or its runtime for an
    interpreted language), or ``None``. Python jobs run in the zygote's own interpreter."""
    if lang.kind == "python":
        from gymforge.sandbox.local import default_python

        return None if os.access(default_python(), os.X_OK) else "python3"
    template = lang.compile if lang.compile is not None else lang.run
    exe = template[0] if template else ""
    if not exe or exe.startswith("{"):
        return None
    found = os.access(exe, os.X_OK) if exe.startswith("/") else shutil.which(exe) is not None
    return None if found else exe


def require_sandbox(languages: Iterable[str], settings: Settings) -> None:
    """Raise ``IsolationUnavailableError`` unless jobs in ``languages`` can run in the sandbox
    ``settings`` choose.

    Checks that the isolated sandbox starts (bubblewrap, and ``setpriv`` as root; skipped when
    ``settings.unsafe_no_isolation``) and that each language's compiler or runtime is
    installed. Cheap after the first call (the bubblewrap probe is cached per process). With
    ``settings.sandbox == "docker"`` it checks the container engine and that its image has
    each language's runtime instead."""
    from gymforge.sandbox.doctor import bwrap_works

    if settings.sandbox == "docker":
        require_container_languages([get_language(name) for name in sorted(set(languages))])
        return
    if not settings.unsafe_no_isolation:
        ok, why = bwrap_works()
        if not ok:
            raise IsolationUnavailableError(
                f"the code sandbox cannot start: {why}; {DOCTOR} (or set {UNSAFE_ENV}=1 to run "
                "untrusted code WITHOUT isolation)"
            )
    for name in sorted(set(languages)):
        tool = missing_tool(get_language(name))
        if tool is not None:
            raise IsolationUnavailableError(
                f"code in {name} cannot be judged here: {tool!r} is not installed; {DOCTOR}"
            )


def require_read_only_files() -> None:
    """Raise ``IsolationUnavailableError`` unless jobs can ask for read-only files here
    (``SandboxJob.read_only_files``: Landlock in the kernel, which every backend shares,
    the unsafe one included)."""
    from gymforge.sandbox.landlock import landlock_abi

    if landlock_abi() < 1:
        raise IsolationUnavailableError(
            "read-only job files need Landlock (Linux 5.13+ with the landlock LSM enabled), "
            f"which this kernel lacks; {DOCTOR}"
        )
