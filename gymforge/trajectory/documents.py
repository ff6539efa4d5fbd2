"""A run's documents under its seal: ``manifest.json``, ``summary.json``, ``eval.json``,
``calibration.json``.

The final run seal of a sealed ``trajectories.jsonl`` records the sha256 of each document
present in its directory when it was written (``RunSealRecord.files``; ``gymforge eval``
re-seals the file once ``eval.json`` is written, ``io.reseal``). ``check_documents`` compares
the documents in the directory with that record: a document whose bytes differ *fails its
seal*; one the seal does not cover, or any document of a run written without a key, is
*not sealed*, and nothing vouches that it describes the run. Whoever shows these documents
(``report``, ``verify-log``, ``reproduce``) says so rather than presenting them as trusted.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from gymforge.core.errors import GymforgeError
from gymforge.trajectory.check import FileCheck, check_file

SEALED_DOCUMENTS = ("manifest.json", "summary.json", "eval.json", "calibration.json")
"""The documents of a run directory that its run seal covers, when present."""

TRAJECTORIES = "trajectories.jsonl"

Status = Literal["sealed", "edited", "unsealed", "unchecked", "missing"]


PLURAL = {
    "is not sealed": "are not sealed",
    "is not checked": "are not checked",
    "is not vouched for": "are not vouched for",
    "is missing": "are missing",
}


@dataclass(frozen=True)
class DocumentCheck:
    """One document's standing, in words: ``NAME VERB: WHY`` (for stderr and the report)."""

    name: str
    status: Status
    verb: str
    why: str = ""

    @property
    def trusted(self) -> bool:
        return self.status == "sealed"

    @property
    def line(self) -> str:
        return f"{self.name} {self.verb}" + (f": {self.why}" if self.why else "")


def document_digests(directory: Path) -> dict[str, str]:
    """``{name: sha256}`` of the sealed documents present in ``directory``."""
    found = {}
    for name in SEALED_DOCUMENTS:
        path = directory / name
        if path.is_file():
            found[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def check_documents(directory: Path, check: FileCheck) -> list[DocumentCheck]:
    """The documents of ``directory`` against the seal of its checked trajectory file."""
    present = document_digests(directory)
    files = check.files
    out = []
    for name, digest in present.items():
        if not check.sealed:
            out.append(_unsealed(name, "the run was written without a seal key"))
        elif not check.finished:
            out.append(_unsealed(name, f"no run seal closes {TRAJECTORIES} (unfinished)"))
        elif files is None or name not in files:
            why = "the run seal does not cover it (written after the run was sealed, or by an "
            out.append(_unsealed(name, why + "older gymforge)"))
        elif files[name] != digest:
            why = (
                f"its sha256 is {digest[:12]}, the run seal recorded {files[name][:12]} "
                "(edited after the run was sealed)"
            )
            out.append(DocumentCheck(name, "edited", "fails its seal", why))
        else:
            out.append(DocumentCheck(name, "sealed", "is sealed"))
    for name in sorted(set(files or {}) - set(present)):
        out.append(DocumentCheck(name, "missing", "is missing", "the run seal recorded it"))
    return out


def seal_warnings(directory: Path, key: bytes | None) -> list[str]:
    """What a reader of ``directory``'s documents must be told: a line for each document
    that fails its seal, and one for each group of documents not sealed or not checked for
    the same reason (empty when every document is sealed)."""
    return _grouped([d for d in _standing(directory, key) if not d.trusted])


def _standing(directory: Path, key: bytes | None) -> list[DocumentCheck]:
    names = [n for n in SEALED_DOCUMENTS if (directory / n).is_file()]
    path = directory / TRAJECTORIES
    if not path.is_file():
        return [_unsealed(n, f"the directory has no {TRAJECTORIES}") for n in names]
    try:
        check = check_file(path, key)
    except GymforgeError as err:
        if key is None and is_sealed(path):
            why = (
                "the run is sealed and this was run without the seal key (set "
                "$GYMFORGE_SEAL_KEY or pass --seal-key-file)"
            )
            return [DocumentCheck(n, "unchecked", "is not checked", why) for n in names]
        why = f"{TRAJECTORIES} fails its check: {err}"
        return [DocumentCheck(n, "unchecked", "is not vouched for", why) for n in names]
    return check_documents(directory, check)


def _grouped(docs: list[DocumentCheck]) -> list[str]:
    groups: dict[tuple[str, str], list[str]] = {}
    lines = []
    for doc in docs:
        if doc.status == "edited":
            lines.append(doc.line)
        else:
            groups.setdefault((doc.verb, doc.why), []).append(doc.name)
    for (verb, why), names in groups.items():
        if len(names) > 1:
            names, verb = [", ".join(names[:-1]) + " and " + names[-1]], PLURAL.get(verb, verb)
        lines.append(DocumentCheck(names[0], "unsealed", verb, why).line)
    return lines


def _unsealed(name: str, why: str) -> DocumentCheck:
    return DocumentCheck(name, "unsealed", "is not sealed", why)


def is_sealed(path: Path) -> bool:
    """Whether trajectory file ``path`` carries seals (its first line is sealed)."""
    with open(path, "rb") as fh:
        first = fh.readline()
    return b'"seal":"' in first


__all__ = [
    "SEALED_DOCUMENTS",
    "DocumentCheck",
    "check_documents",
    "document_digests",
    "is_sealed",
    "seal_warnings",
]
