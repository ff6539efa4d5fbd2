"""The rows of ``gymforge list``: every built-in and every installed environment, each made
once to read its spec and task families. An installed one that cannot be made (it fails to
import, claims a built-in or a taken id, makes the wrong ``spec.id``) is a row with status
``broken`` and its one-line reason; the others are listed all the same."""

from __future__ import annotations

import asyncio
from typing import Any

from gymforge.core.errors import UserError
from gymforge.registry.handle import task_source
from gymforge.registry.installed import InstalledEnv, installed, one_line
from gymforge.registry.packed import read_embedded
from gymforge.registry.resolve import BUILTIN, make_env


def _describe(ref: str) -> dict[str, Any]:
    env = make_env(ref)
    try:
        tasks = task_source(env)
        return {
            "id": env.spec.id,
            "version": env.spec.version,
            "renderer_version": env.spec.renderer_version,
            "description": env.spec.description,
            "families": sorted(tasks.families) if tasks else [],
        }
    finally:
        asyncio.run(env.close())


def _installed_row(entry: InstalledEnv) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": entry.id,
        "source": "installed",
        "package": entry.package,
        "package_version": entry.package_version,
        "entry_point": entry.value,
    }
    try:
        if entry.problem is not None:
            raise UserError(entry.problem)
        row.update(_describe(entry.id), status="ok", error=None)
        embedded = read_embedded(entry)
        row["qa"] = embedded.summary() if embedded is not None else None
    except Exception as err:  # one broken package must not hide the others
        row.update(status="broken", error=one_line(err), version=None, families=[])
        row.setdefault("description", "")
        row.setdefault("qa", None)
    return row


def environment_rows(gymforge_version: str) -> list[dict[str, Any]]:
    """Built-ins first (package ``gymforge`` at ``gymforge_version``), then installed ones
    by id."""
    rows = [
        {
            **_describe(env_id),
            "source": "builtin",
            "package": "gymforge",
            "package_version": gymforge_version,
            "status": "ok",
            "error": None,
        }
        for env_id in sorted(BUILTIN)
    ]
    rows += [_installed_row(e) for e in installed(frozenset(BUILTIN)).all()]
    return rows


__all__ = ["environment_rows"]
