"""The QA report that ``gymforge pack`` embeds in a package, and reading it back.

The report is ``<env id>.qa.json`` beside the module the entry point names (as golden
renderings sit beside the environment's code), shipped as package data in the wheel and the
sdist. It is the ``gymforge qa --json`` report of the source that was packed, wrapped with
what was packed: the distribution, its version and the gymforge version that ran the checks.
``gymforge list`` shows its verdict; ``gymforge qa ENV --show-embedded`` prints it.

The report is tied to the files it was made from: ``sources`` holds the sha256 of every
Python file and golden rendering under the module's directory when QA ran
(``source_hashes``). Read back, the installed directory is hashed again, and a report whose
files differ (code changed after QA ran, a file added or removed) or that records no hashes
(hand-written, or packed by an older gymforge) is *unverified*: ``gymforge list`` says so
instead of its verdict. The hashes tie a report to the code; they do not prove that QA ran
(anyone can write a file with the right hashes): ``gymforge qa ENV`` runs it again.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, PrivateAttr, ValidationError

from gymforge.core.errors import UserError
from gymforge.registry.installed import InstalledEnv

SUFFIX = ".qa.json"
HASHED = ("*.py", "*.golden.json")
"""The files under the module's directory a report is tied to."""
SHOWN_CHANGES = 3


class EmbeddedReport(BaseModel):
    """What ``pack`` writes: ``report`` is the QA run's JSON report."""

    env: str
    package: str
    package_version: str
    gymforge_version: str
    report: dict[str, Any]
    sources: dict[str, str] | None = None
    """``{path under the module's directory: sha256}`` of the files QA ran on."""
    _unverified: str | None = PrivateAttr(default=None)

    @property
    def passed(self) -> bool:
        return bool(self.report.get("passed")) and self._unverified is None

    @property
    def unverified(self) -> str | None:
        """Why the report cannot be tied to the installed files (None when it is)."""
        return self._unverified

    def tie(self, where: Path) -> None:
        """Compare ``sources`` with the files under ``where`` (the installed module's
        directory); ``unverified`` then says why they differ, if they do."""
        if not self.sources:
            self._unverified = (
                "the report records no hashes of the files it was made from (hand-written, "
                "or packed by an older gymforge)"
            )
            return
        now = source_hashes(where)
        changed = sorted(
            p for p in set(self.sources) | set(now) if self.sources.get(p) != now.get(p)
        )
        if changed:
            shown = ", ".join(changed[:SHOWN_CHANGES]) + (
                ", ..." if len(changed) > SHOWN_CHANGES else ""
            )
            self._unverified = f"{shown} differ from the files QA ran on"

    def summary(self) -> str:
        """``10/10 checks passed`` or ``8/10 passed (failed: a, b)``, with the versions;
        ``unverified: WHY (the report claims ...)`` when it is not tied to the files."""
        checks = self.report.get("checks", [])
        ok = [c for c in checks if c.get("passed")]
        failed = [str(c.get("name")) for c in checks if not c.get("passed")]
        head = f"{len(ok)}/{len(checks)} passed"
        tail = f" (failed: {', '.join(failed)})" if failed else ""
        text = f"{head}{tail}, env {self.report.get('version')}, gymforge {self.gymforge_version}"
        if self._unverified is not None:
            return f"unverified: {self._unverified} (the report claims {text})"
        return text


def source_hashes(where: Path) -> dict[str, str]:
    """``{relative posix path: sha256}`` of the ``HASHED`` files under ``where`` (caches
    left out): what an embedded report is tied to."""
    found = {}
    for pattern in HASHED:
        for path in where.rglob(pattern):
            if "__pycache__" in path.parts or not path.is_file():
                continue
            found[path.relative_to(where).as_posix()] = hashlib.sha256(
                path.read_bytes()
            ).hexdigest()
    return dict(sorted(found.items()))


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
    found.tie(path.parent)
    return found


__all__ = [
    "SUFFIX",
    "EmbeddedReport",
    "module_dir",
    "read_embedded",
    "report_name",
    "source_hashes",
]
