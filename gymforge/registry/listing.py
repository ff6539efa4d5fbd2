"""The rows of ``gymforge list``: every built-in and every installed environment, each made
once to read its spec and task families. An installed one that cannot be made (it fails to
import, claims a built-in or a taken id, makes the wrong ``spec.id``) is a row with status
``broken`` and its one-line reason; the others are listed all the same.

When reasoning-gym is installed, the ``reasoning-gym:NAME`` datasets that
``benchmarks/rg_interop.py`` audited follow (source ``adapter``), read from its findings file
without importing reasoning-gym: each says what the adapter's red team found, and a dataset
whose own scorer pays a generic attack is marked ``scorer pays: <attacks>``."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
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
    return rows + adapter_rows()


RG_FINDINGS = Path(__file__).with_name("reasoning_gym_findings.json")


def rg_mark(found: dict[str, Any]) -> str:
    """One line on an audited reasoning-gym dataset (``gymforge list``'s QA column)."""
    own = ", ".join(found.get("scorer_pays", []))
    if found.get("verdict") == "passed" and found.get("strict"):
        return "red team passed with gymforge's strict verifier" + (
            f" (reasoning-gym's scorer pays: {own})" if own else ""
        )
    if found.get("verdict") == "passed":
        return "red team passed"
    if own:
        return f"scorer pays: {own}"
    return f"{found.get('verdict', 'not tested')}: {found.get('note', '')}"[:160]


def adapter_rows(findings: Path = RG_FINDINGS) -> list[dict[str, Any]]:
    """Rows for the audited reasoning-gym datasets (none when reasoning-gym is absent)."""
    if importlib.util.find_spec("reasoning_gym") is None or not findings.exists():
        return []
    data = json.loads(findings.read_text())
    audited = data.get("run", {}).get("reasoning_gym")
    try:
        installed_version = version("reasoning-gym")
    except PackageNotFoundError:
        return []
    rows = []
    for name, found in sorted(data.get("datasets", {}).items()):
        mark = rg_mark(found)
        if audited != installed_version:
            mark = f"unverified: audited on reasoning-gym {audited} ({mark})"
        rows.append(
            {
                "id": f"reasoning-gym:{name}",
                "source": "adapter",
                "package": "reasoning-gym",
                "package_version": installed_version,
                "version": "1.0.0",
                "renderer_version": "1",
                "description": f"reasoning-gym dataset {name!r}",
                "families": [f"reasoning_gym.{name}"],
                "status": "ok",
                "error": None,
                "qa": mark,
                "scorer_pays": list(found.get("scorer_pays", [])),
            }
        )
    return rows


__all__ = ["adapter_rows", "environment_rows"]
