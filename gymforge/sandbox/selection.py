"""Which sandbox backend a run uses: ``Settings.sandbox``, ``local`` or ``docker``.

``local`` (the default) is bubblewrap and zygotes on this host; ``docker`` is the same zygotes
in long-lived containers of a Docker-compatible engine (``gymforge.sandbox.docker``). The choice
is a field of the run's :class:`~gymforge.settings.Settings` (``--sandbox``, else
``$GYMFORGE_SANDBOX``, read once at the edge), passed to everything that needs it: the run's
code-judge backend, the pre-flight check, ``sandbox doctor``, the manifest.
"""

from __future__ import annotations

from gymforge.settings import SANDBOX_ENV, SANDBOX_KINDS, check_sandbox_kind

KINDS = SANDBOX_KINDS
__all__ = ["KINDS", "SANDBOX_ENV", "check_kind", "describe_selection"]


def check_kind(kind: str) -> str:
    """``kind`` when it names a selectable backend, else a one-line ``ConfigError``."""
    return check_sandbox_kind(kind)


def describe_selection(kind: str) -> dict[str, str | None]:
    """What backend ``kind`` runs on, for a run's manifest: ``{"kind": "local"}``, or for
    ``docker`` also the image and its id (``image_id`` None when the engine cannot say)."""
    kind = check_kind(kind)
    if kind != "docker":
        return {"kind": kind}
    from gymforge.sandbox.docker_engine import default_image, engine, image_facts

    image = default_image()
    try:
        image_id: str | None = image_facts(engine(), image).image_id
    except Exception:  # no engine or no image: the run's pre-flight says so, in one line
        image_id = None
    return {"kind": kind, "image": image, "image_id": image_id}
