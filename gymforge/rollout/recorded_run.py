"""What ``replay`` and ``reproduce`` need from a run's manifest, and what to say when it is
missing.

A run records the files it depended on (``paths`` in ``manifest.json``): a file
environment's ``FILE.py`` and a dataset, each as given on the command line, absolute, and
relative to the manifest's directory, so a run folder can be replayed or reproduced from any
working directory, and after the folder and its inputs moved together.

Two rules hold here. A dataset is data: it is found from the manifest (relative to the
manifest first, then the absolute path, then as given) and used when its sha256 matches the
one recorded. An environment is code: a recorded file never chooses what gymforge imports
(``registry.resolve.recorded_env``), so a file or import-path environment is used only when
the user names it with ``--env``; the manifest only lets the error name the exact flag to
pass (``--env /abs/path/fx.py:FxEnv``) and say whether that file still exists. Manifests
written before ``paths`` existed are read the same way, with only the given path to go on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gymforge.core.errors import ConfigError, UserError
from gymforge.registry.resolve import recorded_env
from gymforge.rollout.manifest import file_env_path, read_manifest


@dataclass
class RecordedRun:
    """A run folder's manifest as replay and reproduce read it (``manifest`` is empty when
    the folder has none: a lone trajectory file)."""

    manifest_path: Path | None
    manifest: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def beside(cls, trajectories: Path) -> RecordedRun:
        """The manifest next to a trajectory file, if there is one (replay needs none: an
        unreadable one is ignored and the records alone are used)."""
        candidate = trajectories.parent / "manifest.json"
        if not candidate.is_file():
            return cls(None)
        try:
            return cls(candidate, read_manifest(candidate))
        except ConfigError:
            return cls(None)

    @classmethod
    def at(cls, manifest_path: Path) -> RecordedRun:
        return cls(manifest_path, read_manifest(manifest_path))

    @property
    def run(self) -> dict[str, Any]:
        run = self.manifest.get("run")
        return run if isinstance(run, dict) else {}

    def _candidates(self, kind: str, given: str) -> list[Path]:
        """Where a recorded file may be now: relative to the manifest, absolute, as given."""
        found: list[Path] = []
        entry = (self.manifest.get("paths") or {}).get(kind) or {}
        base = self.manifest_path.parent if self.manifest_path is not None else None
        if isinstance(entry, dict):
            if base is not None and isinstance(entry.get("relative"), str):
                found.append(base / entry["relative"])
            if isinstance(entry.get("absolute"), str):
                found.append(Path(entry["absolute"]))
        found.append(Path(given))
        if base is not None and not Path(given).is_absolute():
            found.append(base / given)  # older manifests: a file kept inside the run folder
        return list(dict.fromkeys(Path(os.path.normpath(p.absolute())) for p in found))

    def env(self, given: str | None, where: str) -> str:
        """The environment to open: ``given`` (the user's ``--env``) or the recorded one when
        it is a built-in or installed id. Otherwise a UserError naming the flag to pass."""
        recorded = str(self.run.get("env") or "")
        if given is not None:
            self._check_given_file(given, recorded)
            return given
        if not recorded:
            raise UserError(f"{where} does not say which environment it ran on: pass --env")
        file = file_env_path(recorded)
        if file is None:
            return recorded_env(recorded, where)
        cls = recorded.rpartition(":")[2] if ":" in recorded else ""
        suffix = f":{cls}" if cls else ""
        here = [p for p in self._candidates("env", file) if p.is_file()]
        trust = "a recorded run never chooses the code gymforge imports"
        if here:
            raise UserError(
                f"{where} ran on the file environment {recorded!r} ({here[0]}); {trust}: "
                f"if you trust that file, pass --env {here[0]}{suffix}"
            )
        tried = ", ".join(str(p) for p in self._candidates("env", file))
        raise UserError(
            f"{where} ran on the file environment {recorded!r}, which is not at {tried} any "
            f"more: pass --env FILE.py{suffix or ':Class'} naming where it is now"
        )

    def _check_given_file(self, given: str, recorded: str) -> None:
        file = file_env_path(given)
        if file is None or Path(file).is_file():
            return
        known = file_env_path(recorded) if recorded else None
        here = [p for p in self._candidates("env", known) if p.is_file()] if known else []
        cls = given.rpartition(":")[2] if ":" in given else ""
        hint = (
            f"; the run's manifest records it at {here[0]}: pass --env {here[0]}"
            + (f":{cls}" if cls else "")
            if here
            else ""
        )
        raise UserError(f"--env {given}: no such file {file} (from {Path.cwd()}){hint}")

    def dataset(self, given: Path | None, where: str) -> Path | None:
        """The dataset file to load: ``given`` (the user's ``--dataset``) or the recorded
        one where it is now (its sha256 is checked by whoever loads it against the
        manifest's); None for a run without one. A UserError saying what is missing when
        it cannot be found."""
        if given is not None:
            return given
        recorded = self.run.get("dataset")
        if not isinstance(recorded, str) or not recorded:
            return None
        candidates = self._candidates("dataset", recorded)
        for path in candidates:
            if path.is_file():
                return path
        pins = [d for d in self.manifest.get("datasets") or [] if isinstance(d, dict)]
        pin = f" (sha256 {str(pins[0].get('sha256'))[:12]})" if pins else ""
        raise UserError(
            f"{where} used the dataset {recorded}{pin}, which is not at "
            f"{', '.join(str(p) for p in candidates)}: pass --dataset FILE with the same rows"
        )
