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


def describe_selection() -> dict[str, str | None]:
    """What the selected backend runs on, for a run's manifest: ``{"kind": "local"}``, or for
    ``docker`` also the image and its id (``image_id`` None when the engine cannot say)."""
    kind = selected_kind()
    if kind != "docker":
        return {"kind": kind}
    from gymforge.sandbox.docker_engine import default_image, engine, image_facts

    image = default_image()
    try:
        image_id: str | None = image_facts(engine(), image).image_id
    except Exception:  # no engine or no image: the run's pre-flight says so, in one line
        image_id = None
    return {"kind": kind, "image": image, "image_id": image_id}
