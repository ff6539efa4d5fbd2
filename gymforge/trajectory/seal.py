"""Sealed trajectory files: the seal key, the keyed chain, and checking a whole file.

Threat model (``docs/reproducibility.md``): the unkeyed digest chain of every record is a
checksum anyone can recompute, so it catches accidental corruption only. With a seal key
(the UTF-8 bytes of a non-empty ``GYMFORGE_SEAL_KEY``, or the exact bytes of a key file),
every line also carries ``seal`` = HMAC-SHA256(key, previous line's seal + the bytes its
digest covers): one chain over the whole file, from the empty string at line 1. Each
invocation that wrote to the file ends with a run seal line (``RunSealRecord``). So without
the key nobody can edit, insert, delete or reorder a record, nor splice in another run's
sealed episodes (their chain starts elsewhere); a file cut after some line is a valid
prefix, reported as *unfinished* (no run seal at its end) rather than as complete.

A file has one final run seal, its last line. An invocation that continues a finished file
(``--resume``; the re-seal that adds ``eval.json``) first rewrites that last run seal as
``continued`` (sealed again at the same place on the chain) and closes the file with a new
run seal naming it (``previous_seal``). So a file cut back to an earlier run seal ends in a
``continued`` one: unfinished, like any other cut. The final run seal also records the
sha256 of the run's documents (``files``), so an edited ``eval.json``, ``summary.json`` or
``manifest.json`` is caught (``gymforge.trajectory.documents``).

Checking with a key refuses any line without a seal, so stripping the seals does not
downgrade a file to the keyless check; checking a sealed file without the key is refused
with a message saying a key is needed.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gymforge.core.errors import IntegrityError, UserError
from gymforge.settings import SEAL_KEY_ENV, environ_seal_key
from gymforge.trajectory.schema import SCHEMA_VERSION

KEY_ENV = SEAL_KEY_ENV
"""The environment variable whose (non-empty) UTF-8 bytes are the seal key."""

NEED_KEY = (
    f"checking it needs the seal key: set ${KEY_ENV} or pass --seal-key-file PATH "
    "(the key the run was written with)"
)


def load_key(key_file: Path | None = None) -> bytes | None:
    """The seal key: the bytes of ``key_file`` when given (it must exist and be non-empty),
    else the UTF-8 bytes of a non-empty ``$GYMFORGE_SEAL_KEY`` (read by ``gymforge.settings``),
    else None (no sealing)."""
    if key_file is not None:
        try:
            data = Path(key_file).read_bytes()
        except OSError as err:
            raise UserError(f"cannot read --seal-key-file {key_file}: {err.strerror}") from err
        if not data:
            raise UserError(f"--seal-key-file {key_file} is empty; a seal key needs bytes")
        return data
    return environ_seal_key()


def key_id(key: bytes) -> str:
    """A short public name of ``key`` (an HMAC of a fixed text: it reveals nothing of the
    key), so a file sealed with another key is reported as such."""
    return hmac.new(key, b"gymforge seal key id", hashlib.sha256).hexdigest()[:16]


def seal_step(key: bytes, previous: str, unsealed: str) -> str:
    """The keyed chain's one formula: HMAC-SHA256 over the previous line's seal followed by
    the bytes the line's digest covers (``unsealed``)."""
    mac = _keyed(key).copy()  # the key schedule once per key, not once per record
    mac.update((previous + unsealed).encode())
    return mac.hexdigest()


@functools.lru_cache(maxsize=4)
def _keyed(key: bytes) -> hmac.HMAC:
    return hmac.new(key, digestmod=hashlib.sha256)


@dataclass
class TrailingSeal:
    """The run seal a file ends with, as a writer continuing the file finds it: where its
    line starts, its fields, and the keyed chain's end before it."""

    offset: int
    raw: dict[str, Any]
    before: str


@dataclass
class ChainState:
    """Where a file's keyed chain stands after its last line: what a writer continuing the
    file (``--resume``) needs, and what a run seal counts. ``last_run_seal`` is the seal of
    the file's last run seal line (what the next run seal names as ``previous_seal``);
    ``trailing`` is set when the file ends with a run seal (a writer rewrites it as
    ``continued`` before it writes anything)."""

    seal: str = ""
    episodes: int = 0
    records: int = 0
    run_ids: list[str] = field(default_factory=list)
    last_run_seal: str | None = None
    trailing: TrailingSeal | None = None

    def add(self, line: dict[str, Any]) -> None:
        """Count one step or episode line read back (its seal is the new chain end)."""
        self.count(line["record"], line["run_id"], line.get("seal") or self.seal)

    def count(self, record: str, run_id: str, seal: str) -> None:
        """Count one step or episode line of run ``run_id`` whose seal is ``seal``."""
        self.seal = seal
        self.trailing = None
        self.records += 1
        if record == "episode":
            self.episodes += 1
            if run_id not in self.run_ids:
                self.run_ids.append(run_id)

    def run_seal_body(
        self,
        run_id: str,
        config: dict[str, Any],
        key: bytes,
        files: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """The fields of the run seal closing the file as it stands (before digest/seal);
        ``files``: the sha256 of the run's documents."""
        extra: dict[str, Any] = {}
        if self.last_run_seal is not None:
            extra["previous_seal"] = self.last_run_seal
        if files is not None:
            extra["files"] = dict(sorted(files.items()))
        return {
            **extra,
            "record": "run_seal",
            "schema_version": SCHEMA_VERSION,
            "run_id": run_id,
            "run_ids": list(self.run_ids),
            "episodes": self.episodes,
            "records": self.records,
            "config": config,
            "key_id": key_id(key),
            "timestamp": time.time(),
        }


def record_label(raw: dict[str, Any]) -> str:
    """How a message names one record: ``step 2``, ``episode record``, ``run seal``."""
    kind = raw.get("record")
    if kind == "step":
        return f"step {raw.get('step')}"
    if kind == "run_seal":
        return "run seal"
    return f"{kind} record"


def describe(n: int, raw: dict[str, Any]) -> str:
    """How an error names line ``n``: its kind, episode and step."""
    if raw.get("record") == "run_seal":
        return f"line {n} (run seal of run {raw.get('run_id')})"
    return f"line {n} ({record_label(raw)} of episode {raw.get('episode_id')})"


def check_run_seal(n: int, raw: dict[str, Any], state: ChainState, key: bytes) -> None:
    """A run seal (already seal-checked) must count exactly what precedes it."""
    where = describe(n, raw)
    if raw.get("key_id") != key_id(key):
        raise IntegrityError(f"{where}: sealed with another key (key id {raw.get('key_id')})")
    counted: dict[str, Any] = {
        "episodes": state.episodes,
        "records": state.records,
        "run_ids": state.run_ids,
    }
    if "previous_seal" in raw:  # files sealed before run seals named their predecessor lack it
        counted["previous_seal"] = state.last_run_seal
    for name, value in counted.items():
        if raw.get(name) != value:
            raise IntegrityError(
                f"{where}: the run seal records {name} = {raw.get(name)!r} but the file "
                f"holds {value!r} before it"
            )


def passed_run_seal(state: ChainState, offset: int, raw: dict[str, Any]) -> None:
    """Advance ``state`` past run seal ``raw`` (already checked), whose line starts at byte
    ``offset``: the file now ends with it."""
    state.trailing = TrailingSeal(offset, raw, state.seal)
    state.seal = state.last_run_seal = str(raw["seal"])


def refuse_unsealed(n: int, raw: dict[str, Any]) -> IntegrityError:
    return IntegrityError(
        f"{describe(n, raw)}: not sealed. With a seal key only a fully sealed file passes: "
        "an unsealed or partly sealed file is refused (stripped seals do not fall back to "
        "the keyless check)"
    )


def bad_seal(n: int, raw: dict[str, Any]) -> IntegrityError:
    return IntegrityError(
        f"{describe(n, raw)}: seal mismatch: this record was edited, inserted, moved or "
        "follows a removed one, or the file was sealed with another key"
    )
