"""Writing and reading trajectory files (JSONL), with validation and the digest chain.

The writer validates every record against the schema models, seals each episode's digest
chain, and writes a whole episode with one ``write`` followed by ``flush`` and ``fsync``:
a run killed midway keeps every finished episode, and never leaves half of one.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from gymforge.core.errors import IntegrityError
from gymforge.core.seeding import canonical_json
from gymforge.trajectory.schema import (
    LINE_ADAPTER,
    EpisodeRecord,
    StepRecord,
    chain_digest,
    chain_step,
    component_totals,
)

_PLACEHOLDER = "0" * 64


def seal_episode(records: list[dict[str, Any]]) -> list[str]:
    """Validate ``records`` (steps then the episode record), chain their digests, and return
    the canonical JSON lines. Raises IntegrityError naming the first invalid record.

    Records are serialised to strict JSON *before* validation, so values JSON cannot hold
    (NaN, infinities, sets, objects) are refused rather than quietly turned into ``null`` or
    lists."""
    lines: list[str] = []
    previous = ""
    for i, rec in enumerate(records):
        try:
            text = canonical_json({**rec, "digest": _PLACEHOLDER})
        except (TypeError, ValueError) as err:
            raise IntegrityError(
                f"record {i} of episode {rec.get('episode_id')} is not JSON: {err}"
            ) from err
        try:
            model = LINE_ADAPTER.validate_json(text)
        except ValidationError as err:
            raise IntegrityError(
                f"record {i} of episode {rec.get('episode_id')} breaks the "
                f"trajectory schema: {err.errors()[0]['loc']}: "
                f"{err.errors()[0]['msg']}"
            ) from err
        previous, line = _chained_line(previous, model.model_dump(mode="json"))
        lines.append(line)
    return lines


def _chained_line(previous: str, body: dict[str, Any]) -> tuple[str, str]:
    """The digest of ``body`` chained onto ``previous``, and ``body``'s canonical JSON line
    with that digest: the same bytes as ``chain_digest`` followed by ``canonical_json`` of the
    body with its digest set, but with the body encoded once (a ``digest`` key already in
    ``body`` is replaced). Canonical JSON sorts keys, so the ``digest`` entry sits between the
    keys sorting before it and those sorting after."""
    head = canonical_json({k: v for k, v in body.items() if k < "digest"})[1:-1]
    tail = canonical_json({k: v for k, v in body.items() if k > "digest"})[1:-1]
    unsealed = "{" + ",".join(part for part in (head, tail) if part) + "}"
    digest = chain_step(previous, unsealed)
    entry = '"digest":"' + digest + '"'
    return digest, "{" + ",".join(part for part in (head, entry, tail) if part) + "}"


class TrajectoryWriter:
    """Appends sealed episodes to a JSONL file, durably."""

    def __init__(self, path: str | Path, *, append: bool = False) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] = open(self.path, "a" if append else "w", encoding="utf-8")  # noqa: SIM115

    def write_episode(self, records: list[dict[str, Any]]) -> None:
        self._fh.write("".join(line + "\n" for line in seal_episode(records)))
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> TrajectoryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class EpisodeLog:
    """The lines of one episode as read back; ``end`` is None if the episode is incomplete."""

    episode_id: str
    steps: list[StepRecord] = field(default_factory=list)
    end: EpisodeRecord | None = None
    raw: list[dict[str, Any]] = field(default_factory=list)
    first_line: int = 0


def read_records(
    path: str | Path,
) -> Iterator[tuple[int, dict[str, Any], StepRecord | EpisodeRecord]]:
    """Yield ``(line_number, raw_dict, model)``; IntegrityError on bad JSON or schema."""
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
                yield n, raw, LINE_ADAPTER.validate_python(raw)
            except json.JSONDecodeError as err:
                raise IntegrityError(f"line {n}: not JSON ({err.msg}); truncated write?") from err
            except ValidationError as err:
                e = err.errors()[0]
                loc = ".".join(str(x) for x in e["loc"])
                raise IntegrityError(
                    f"line {n}: breaks the trajectory schema at {loc}: {e['msg']}"
                ) from err


def read_episodes(path: str | Path) -> list[EpisodeLog]:
    """Group a file's records by episode, in file order."""
    episodes: dict[str, EpisodeLog] = {}
    for n, raw, rec in read_records(path):
        log = episodes.get(rec.episode_id)
        if log is None:
            log = episodes[rec.episode_id] = EpisodeLog(rec.episode_id, first_line=n)
        elif log.end is not None:
            raise IntegrityError(f"line {n}: record after the end of episode {rec.episode_id}")
        log.raw.append(raw)
        if isinstance(rec, StepRecord):
            log.steps.append(rec)
        else:
            log.end = rec
    return list(episodes.values())


def verify_chain(log: EpisodeLog) -> None:
    """Check the digest chain, step numbering and totals of one episode; IntegrityError if not."""
    where = f"episode {log.episode_id} (line {log.first_line})"
    if log.end is None:
        raise IntegrityError(f"{where}: no episode record; the episode is incomplete")
    previous = ""
    for i, raw in enumerate(log.raw):
        expected = chain_digest(previous, raw)
        if raw.get("digest") != expected:
            kind = raw.get("record")
            step = f" step {raw.get('step')}" if kind == "step" else ""
            raise IntegrityError(
                f"{where}: digest mismatch at record {i} ({kind}{step}): the "
                "record was edited, reordered or removed"
            )
        previous = expected
    for i, s in enumerate(log.steps):
        if s.step != i:
            raise IntegrityError(f"{where}: step {s.step} found where step {i} was expected")
        if (s.terminated or s.truncated) and i != len(log.steps) - 1:
            raise IntegrityError(f"{where}: step {i} ends the episode but more steps follow")
    end, last = log.end, log.steps[-1]
    if end.steps != len(log.steps) - 1:
        raise IntegrityError(
            f"{where}: episode record counts {end.steps} steps, file holds {len(log.steps) - 1}"
        )
    # a policy whose context filled up ends the episode itself: no terminal env step
    cut_by_policy = end.truncated and end.failure_reason == "context_length"
    ended = last.terminated or last.truncated
    if (len(log.steps) < 2 or not ended) and not cut_by_policy:
        raise IntegrityError(f"{where}: the last step does not end the episode")
    totals = component_totals([s.reward_components for s in log.steps])
    expected = {
        "reward_components": totals,
        "reward": math.fsum(totals.values()),
        "terminated": last.terminated and not cut_by_policy,
        "truncated": last.truncated or cut_by_policy,
        "success": bool(last.info.get("success")) and not cut_by_policy,
    }
    if cut_by_policy and ended:
        raise IntegrityError(f"{where}: cut short by the policy after the episode had ended")
    for name, value in expected.items():
        if getattr(end, name) != value:
            raise IntegrityError(
                f"{where}: episode record {name} = {getattr(end, name)!r} but its steps "
                f"give {value!r}"
            )


def sealed_log(records: list[dict[str, Any]]) -> EpisodeLog:
    """Seal an episode's records and read them back, exactly as a file round trip would."""
    raws = [json.loads(line) for line in seal_episode(records)]
    log = EpisodeLog(raws[0]["episode_id"], raw=raws)
    for raw in raws:
        rec = LINE_ADAPTER.validate_python(raw)
        if isinstance(rec, StepRecord):
            log.steps.append(rec)
        else:
            log.end = rec
    return log


def recover_finished(path: str | Path) -> list[dict[str, Any]]:
    """Prepare a trajectory file for ``--resume``: keep every complete, verified episode and
    cut off a torn tail (a partial line or an episode without its closing record), which is
    all a crash can leave since episodes are written whole. Returns the kept episode records.

    Damage anywhere but the tail raises IntegrityError rather than dropping finished work.
    """
    p = Path(path)
    data = p.read_bytes()
    kept: list[dict[str, Any]] = []
    log: EpisodeLog | None = None
    good_end = pos = 0
    lines = data.splitlines(keepends=True)
    for n, line in enumerate(lines, 1):
        pos += len(line)
        try:
            if not line.endswith(b"\n"):
                raise ValueError("no newline")
            raw = json.loads(line)
            rec = LINE_ADAPTER.validate_python(raw)
        except (ValueError, ValidationError) as err:
            if any(b'"record":"episode"' in later for later in lines[n:]):
                raise IntegrityError(
                    f"{p}: line {n} is damaged and finished episodes follow "
                    "it; refusing to truncate"
                ) from err
            break
        if log is None or log.episode_id != rec.episode_id:
            log = EpisodeLog(rec.episode_id, first_line=n)
        log.raw.append(raw)
        if isinstance(rec, StepRecord):
            log.steps.append(rec)
            continue
        log.end = rec
        verify_chain(log)
        kept.append(raw)
        good_end, log = pos, None
    if good_end < len(data):
        with open(p, "r+b") as fh:
            fh.truncate(good_end)
            fh.flush()
            os.fsync(fh.fileno())
    return kept
