"""``get_backend``: the factory that picks a backend by name.

It sits above every backend (``host``: local, unsafe, docker; ``ray_pool``: ray), and no
backend imports it, so the sandbox package's imports run one way.
"""

from __future__ import annotations

from typing import Any

from gymforge.sandbox.backend import BaseBackend
from gymforge.sandbox.host import host_backend


def get_backend(
    kind: str = "local", *, unsafe_no_isolation: bool = False, **kwargs: Any
) -> BaseBackend:
    """A ready backend. ``kind``: ``local`` (bubblewrap + zygotes), ``docker`` (zygotes in
    long-lived containers of podman or another Docker-compatible engine),
    ``ray`` (a pool of local backends on Ray actors) or ``unsafe``.

    ``local`` raises ``IsolationUnavailableError`` when bubblewrap cannot run here, unless
    ``unsafe_no_isolation=True``, which falls back to ``UnsafeBackend`` with a loud warning.
    """
    if kind == "ray":
        from gymforge.sandbox.ray_pool import RayBackend

        return RayBackend(**kwargs)
    return host_backend(kind, unsafe_no_isolation=unsafe_no_isolation, **kwargs)
