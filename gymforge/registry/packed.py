"""The QA report that ``gymforge pack`` embeds in a package, and reading it back.

The report is ``<env id>.qa.json`` beside the module the entry point names (as golden
renderings sit beside the environment's code), shipped as package data in the wheel and the
sdist. It is the ``gymforge qa --json`` report of the source that was packed, wrapped with
what was packed: the distribution, its version and the gymforge version that ran the checks.
``gymforge list`` shows its verdict; ``gymforge qa ENV --show-embedded`` prints it.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from gymforge.core.errors import UserError
from gymforge.registry.installed import InstalledEnv

SUFFIX = ".qa.json"


class EmbeddedReport(BaseModel):
    """What ``pack`` writes: ``report`` is the QA run's JSON report."""

    env: str
    package: str
    package_version: str
    gymforge_version: str
    report: dict[str, Any]

    @property
    def passed(self) -> bool:
        return bool(self.report.get("passed"))

    def summary(self) -> str:
        """``10/10 checks passed`` or ``8/10 passed (failed: a, b)``, with the versions."""
        checks = self.report.get("checks", [])
        ok = [c for c in checks if c.get("passed")]
        failed = [str(c.get("name")) for c in checks if not c.get("passed")]
        head = f"{len(ok)}/{len(checks)} passed"
        tail = f" (failed: {', '.join(failed)})" if failed else ""
        return f"{head}{tail}, env {self.report.get('version')}, gymforge {self.gymforge_version}"


def report_name(env_id: str) -> str:
    return f"{env_id}{SUFFIX}"


def module_dir(module_name: str) -> Path | None:
    """The directory holding ``module_name``'s file (importing its parent packages only)."""
    try:
        spec = importlib.util.find_spec(module_name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or spec.origin in ("built-in", "frozen"):
        return None
    return Path(spec.origin).parent


def read_embedded(entry: InstalledEnv) -> EmbeddedReport | None:
    """The report packed with ``entry``'s package; None if it was not built by ``pack``.
    A report that does not parse is a ``UserError`` naming its file."""
    where = module_dir(entry.value.partition(":")[0])
    path = where / report_name(entry.id) if where is not None else None
    if path is None or not path.is_file():
        return None
    try:
        found = EmbeddedReport.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, ValidationError) as err:
        first = str(err).splitlines()[0]
        raise UserError(f"{path}: not an embedded QA report: {first}") from None
    if found.env != entry.id or found.report.get("env") != entry.id:
        raise UserError(f"{path}: the embedded QA report is about {found.env!r}, not {entry.id!r}")
    return found


__all__ = ["SUFFIX", "EmbeddedReport", "module_dir", "read_embedded", "report_name"]
