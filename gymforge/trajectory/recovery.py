"""Continuing a trajectory file: ``--resume`` keeps its finished episodes and cuts a torn
tail (``recover_run``), and ``reseal`` closes a finished sealed file again with a new run seal.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gymforge.core.errors import IntegrityError, UserError
from gymforge.trajectory.reader import EpisodeLog, verify_chain
from gymforge.trajectory.schema import (
    LINE_ADAPTER,
    RunSealRecord,
    load_line,
    unsealed_json,
)
from gymforge.trajectory.seal import (
    NEED_KEY,
    ChainState,
    bad_seal,
    check_run_seal,
    passed_run_seal,
    seal_step,
)
from gymforge.trajectory.writer import TrajectoryWriter


def recover_finished(path: str | Path) -> list[dict[str, Any]]:
    """``recover_run`` of an unsealed file: the kept episode records."""
    return recover_run(path, None)[0]


def recover_run(path: str | Path, key: bytes | None) -> tuple[list[dict[str, Any]], ChainState]:
    """Prepare a trajectory file for ``--resume``: keep every complete, verified episode and
    cut off a torn tail (a partial line or an episode without its closing record), which is
    all a crash can leave since episodes are written whole. Returns the kept episode records
    and where the file's keyed chain stands, for the writer continuing it.

    With ``key`` every kept line must carry a valid seal, so a forged file is never
    extended and re-sealed; a sealed file without the key, or an unsealed one with a key,
    is refused (either would leave a partly sealed file). Damage anywhere but the tail
    raises IntegrityError rather than dropping finished work."""
    p = Path(path)
    data = p.read_bytes()
    kept: list[dict[str, Any]] = []
    state = ChainState()
    chain = ""  # the keyed chain's end after the last line read
    log: EpisodeLog | None = None
    good_end = pos = 0
    lines = data.splitlines(keepends=True)
    for n, line in enumerate(lines, 1):
        pos += len(line)
        try:
            if not line.endswith(b"\n"):
                raise ValueError("no newline")
            raw = load_line(line)
            rec = LINE_ADAPTER.validate_python(raw)
        except (ValueError, ValidationError) as err:
            if any(b'"record":"episode"' in later for later in lines[n:]):
                raise IntegrityError(
                    f"{p}: line {n} is damaged and finished episodes follow "
                    "it; refusing to truncate"
                ) from err
            break
        chain = _check_resumable(p, n, raw, key, chain)
        if isinstance(rec, RunSealRecord):
            if log is not None:
                raise IntegrityError(f"{p}: line {n}: a run seal inside an episode")
            assert key is not None  # _check_resumable refused a run seal without a key
            check_run_seal(n, raw, state, key)
            passed_run_seal(state, pos - len(line), raw)
            good_end = pos
            continue
        if log is None or log.episode_id != rec.episode_id:
            log = EpisodeLog(rec.episode_id, first_line=n)
        if not log.take(raw, rec):
            continue
        verify_chain(log)
        for record in log.raw:
            state.add(record)
        kept.append(raw)
        good_end, log = pos, None
    if good_end < len(data):
        with open(p, "r+b") as fh:
            fh.truncate(good_end)
            fh.flush()
            os.fsync(fh.fileno())
    return kept, state


def _check_resumable(path: Path, n: int, raw: dict[str, Any], key: bytes | None, chain: str) -> str:
    """Refuse to continue a file whose line ``n`` the writer could not seal onto; return
    the keyed chain's end after the line (``chain`` is its end before)."""
    sealed = "seal" in raw
    if sealed and key is None:
        raise UserError(f"{path} is a sealed run; resuming it needs its key: {NEED_KEY}")
    if key is None:
        return chain
    if not sealed:
        raise UserError(
            f"{path} holds unsealed records (line {n}); resuming it with a seal key would "
            "leave it partly sealed: resume without the key, or start a new run"
        )
    if raw["seal"] != seal_step(key, chain, unsealed_json(raw)):
        raise bad_seal(n, raw)
    return str(raw["seal"])


def reseal(path: str | Path, key: bytes, files: dict[str, str]) -> bool:
    """Close a finished sealed file again with a run seal recording ``files`` (the sha256 of
    the run's documents, e.g. once ``eval.json`` is written): its run seal becomes
    ``continued`` and a copy of it, naming it, ends the file. Every seal is checked first.
    Returns False, writing nothing, for a file that does not end with a final run seal (an
    unfinished or cut run stays unfinished)."""
    state = _sealed_state(Path(path), key)
    if state.trailing is None or state.trailing.raw.get("continued"):
        return False  # a continued run seal at the end: a cut file, not a finished one
    last = state.trailing.raw
    with TrajectoryWriter(path, append=True, key=key, config=last["config"], state=state) as w:
        w.seal_run(str(last["run_id"]), files)
    return True


def _sealed_state(path: Path, key: bytes) -> ChainState:
    """Where the keyed chain of sealed file ``path`` stands, every line's seal and every run
    seal's counts checked (IntegrityError at the first that fails). Only the seals: a line
    whose seal verifies was written, schema-checked, by a holder of the key, so this skips
    the schema and digest checks ``recover_run`` repeats (half its cost)."""
    state = ChainState()
    pos = 0
    with open(path, "rb") as fh:
        for n, line in enumerate(fh, 1):
            start, pos = pos, pos + len(line)
            try:
                raw = load_line(line)
            except ValueError:
                raise IntegrityError(f"{path}: line {n} is not JSON; not a finished run") from None
            if not isinstance(raw, dict) or "seal" not in raw:
                raise IntegrityError(f"{path}: line {n} is not sealed")
            if raw["seal"] != seal_step(key, state.seal, unsealed_json(raw)):
                raise bad_seal(n, raw)
            if raw.get("record") == "run_seal":
                check_run_seal(n, raw, state, key)
                passed_run_seal(state, start, raw)
            else:
                state.add(raw)
    return state
