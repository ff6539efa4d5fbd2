"""A backend that runs on this host: ``local``, ``unsafe`` or ``docker``.

``host_backend`` is what ``get_backend`` (``gymforge.sandbox.factory``) uses for every kind but
``ray``, and what each Ray actor uses for its own backend, so the Ray pool needs no arrow back
to the factory that creates it.
"""

from __future__ import annotations

from typing import Any

from gymforge.core.errors import ConfigError
from gymforge.sandbox.backend import BaseBackend, IsolationUnavailableError

HOST_KINDS = ("local", "unsafe", "docker")


def host_backend(
    kind: str = "local", *, unsafe_no_isolation: bool = False, **kwargs: Any
) -> BaseBackend:
    """A ready backend of ``kind`` on this host (see ``get_backend``)."""
    if kind == "local":
        from gymforge.sandbox.doctor import bwrap_works

        ok, why = bwrap_works()
        if ok:
            from gymforge.sandbox.local import LocalBackend

            return LocalBackend(**kwargs)
        if not unsafe_no_isolation:
            raise IsolationUnavailableError(
                f"sandbox isolation is unavailable here ({why}); run `gymforge sandbox doctor`, "
                "or pass --unsafe-no-isolation to run untrusted code WITHOUT isolation"
            )
        kind = "unsafe"
    if kind == "unsafe":
        if not unsafe_no_isolation:
            raise IsolationUnavailableError(
                "the unsafe backend runs untrusted code without isolation; "
                "pass unsafe_no_isolation=True (--unsafe-no-isolation) to accept that"
            )
        from gymforge.sandbox.local import UnsafeBackend

        return UnsafeBackend(**kwargs)
    if kind == "docker":
        from gymforge.sandbox.docker import DockerBackend

        return DockerBackend(**kwargs)
    raise ConfigError(f"unknown sandbox backend {kind!r}; use local, docker, ray or unsafe")
