"""Checking a whole trajectory file: what ``verify-log`` and ``replay`` run first.

``check_file(path, key)`` reads every line once and raises IntegrityError naming the first
bad record. Without a key: each episode's unkeyed digest chain, numbering and totals
(``verify_chain``), which catches accidental corruption only; a sealed file is refused
(a key is needed). With a key: additionally every line's seal on the file's keyed chain
(see ``gymforge.trajectory.seal``), and every run seal's counts; an unsealed or partly
sealed file is refused. A sealed file whose last line is not a final run seal (none, or
one a later invocation ``continued``) is *unfinished*: its lines verify, but the invocation
that wrote them never completed (or its end was cut off), so nothing vouches that the file
holds the whole run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gymforge.core.errors import IntegrityError
from gymforge.trajectory.io import EpisodeLog, read_records, verify_chain
from gymforge.trajectory.schema import RunSealRecord, load_line, unsealed_json
from gymforge.trajectory.seal import (
    NEED_KEY,
    ChainState,
    bad_seal,
    check_run_seal,
    describe,
    key_id,
    passed_run_seal,
    refuse_unsealed,
    seal_step,
)


@dataclass
class FileCheck:
    """What ``check_file`` found: the verified episodes (a torn last episode of an
    unfinished sealed file is left out) and the state of the seals."""

    episodes: list[EpisodeLog] = field(default_factory=list)
    sealed: bool = False
    finished: bool = True
    run_seals: int = 0
    config: dict[str, Any] | None = None
    key_id: str | None = None
    torn: bool = False
    continued: bool = False
    """The file ends at a run seal that a later invocation carried on from (a cut)."""
    files: dict[str, str] | None = None
    """The sha256 of the run's documents, as the final run seal records them."""

    @property
    def steps(self) -> int:
        return sum(len(e.steps) for e in self.episodes)


def check_file(path: str | Path, key: bytes | None) -> FileCheck:
    """Check every line of ``path`` (see the module docstring); IntegrityError if not."""
    result = FileCheck(sealed=key is not None, key_id=key_id(key) if key else None)
    state = ChainState()
    current: EpisodeLog | None = None
    ended: set[str] = set()
    last_kind = None
    last_seal: dict[str, Any] | None = None
    for n, raw, rec in read_records(path):
        if key is None:
            if "seal" in raw or isinstance(rec, RunSealRecord):
                raise IntegrityError(
                    f"{describe(n, raw)}: this file is sealed (HMAC-SHA256); {NEED_KEY}"
                )
        elif "seal" not in raw:
            raise refuse_unsealed(n, raw)
        elif raw["seal"] != seal_step(key, state.seal, unsealed_json(raw)):
            if isinstance(rec, RunSealRecord) and raw.get("key_id") != result.key_id:
                raise IntegrityError(
                    f"{describe(n, raw)}: the file was sealed with another key (key id "
                    f"{raw.get('key_id')}, the key given has {result.key_id})"
                )
            raise bad_seal(n, raw)
        last_kind = rec.record
        if isinstance(rec, RunSealRecord):
            if current is not None:
                raise IntegrityError(f"{describe(n, raw)}: a run seal inside an episode")
            assert key is not None
            check_run_seal(n, raw, state, key)
            passed_run_seal(state, 0, raw)
            result.run_seals += 1
            result.config = raw["config"]
            last_seal = raw
            continue
        state.add(raw)
        if current is None or current.episode_id != rec.episode_id:
            if current is not None:
                verify_chain(current)  # raises: the episode has no closing record
            if rec.episode_id in ended:
                raise IntegrityError(
                    f"{describe(n, raw)}: record after the end of episode {rec.episode_id}"
                )
            current = EpisodeLog(rec.episode_id, first_line=n)
        if not current.take(raw, rec):
            continue
        verify_chain(current)
        result.episodes.append(current)
        ended.add(rec.episode_id)
        current = None
    if current is not None:
        if key is None:
            verify_chain(current)  # an incomplete episode: raises, as it always has
        result.torn = True
    closed = last_kind == "run_seal" and last_seal is not None and not result.torn
    result.continued = closed and bool(last_seal and last_seal.get("continued"))
    result.finished = key is None or (closed and not result.continued)
    if result.finished and last_seal is not None:
        result.files = last_seal.get("files")
    return result


def looks_finished(path: str | Path) -> bool:
    """Without the key, what a file's structure says: False for a sealed file whose last
    line is not a final (not ``continued``) run seal. Nothing here is checked against a
    seal (anyone can append a line that looks like one): with a key, use ``check_file``."""
    first = last = b""
    with open(path, "rb") as fh:
        for line in fh:
            if line.strip():
                first = first or line
                last = line
    if b'"seal":"' not in first:
        return True  # an unsealed file: nothing marks its end
    try:
        raw = load_line(last)
    except ValueError:
        return False
    return isinstance(raw, dict) and raw.get("record") == "run_seal" and not raw.get("continued")


def describe_check(check: FileCheck) -> str:
    """The one line ``verify-log`` prints for a file that passed (finished or not)."""
    counts = f"{len(check.episodes)} episodes, {check.steps} step records"
    if not check.sealed:
        return (
            f"log ok: {counts}, digest chains intact. No seal key was given, so this "
            "detects accidental corruption only: anyone can recompute an unkeyed digest "
            "chain after an edit (write and check runs with $GYMFORGE_SEAL_KEY or "
            "--seal-key-file to detect deliberate edits)"
        )
    if check.continued:
        return (
            f"log unfinished: {counts}, every record sealed (key id {check.key_id}), but the "
            "file ends at a run seal that a later invocation continued (--resume, or the "
            "re-seal of its documents): what that invocation wrote was cut off, so nothing "
            "vouches that the file holds the whole run"
        )
    if not check.finished:
        torn = "; the last episode is incomplete (a torn write)" if check.torn else ""
        return (
            f"log unfinished: {counts}, every record sealed (key id {check.key_id}), but no "
            f"run seal closes the file{torn}: the run was interrupted (or its end was cut "
            "off), so nothing vouches that it holds the whole run; --resume the run to seal "
            "it"
        )
    config = ", ".join(f"{k}={v}" for k, v in sorted((check.config or {}).items()) if k in _SHOWN)
    return (
        f"log ok: {counts}, sealed (HMAC-SHA256, key id {check.key_id}) and closed by a run "
        f"seal{f' ({config})' if config else ''}: no record was edited, added, removed or "
        "reordered since it was written"
    )


_SHOWN = ("env", "policy", "seed", "split", "group")
