"""Which sandbox backend this process uses: ``GYMFORGE_SANDBOX=local|docker``.

``local`` (the default) is bubblewrap and zygotes on this host; ``docker`` is the same zygotes
in long-lived containers of a Docker-compatible engine (``gymforge.sandbox.docker``). The CLI's
``--sandbox`` flag sets the variable, so every component of the process (the code judge's
shared backend, the pre-flight check, ``sandbox doctor``) agrees on one choice.
"""

from __future__ import annotations

import os

from gymforge.core.errors import ConfigError

SANDBOX_ENV = "GYMFORGE_SANDBOX"
KINDS = ("local", "docker")


def check_kind(kind: str) -> str:
    """``kind`` when it names a selectable backend, else a one-line ``ConfigError``."""
    if kind not in KINDS:
        raise ConfigError(f"unknown sandbox backend {kind!r} ({SANDBOX_ENV}); use local or docker")
    return kind


def selected_kind() -> str:
    """The backend ``GYMFORGE_SANDBOX`` selects (``local`` when unset or empty)."""
    return check_kind(os.environ.get(SANDBOX_ENV, "").strip().lower() or "local")


def select_kind(kind: str | None) -> None:
    """Make ``kind`` this process's backend (``None`` keeps what the environment says)."""
    if kind is not None:
        os.environ[SANDBOX_ENV] = check_kind(kind.strip().lower())
