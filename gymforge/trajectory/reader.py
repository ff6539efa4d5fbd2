"""Reading trajectory files back: records validated line by line, grouped by episode, and
each episode's digest chain, step numbering and totals checked.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gymforge.core.errors import POLICY_STOP_REASONS, IntegrityError
from gymforge.trajectory.episode_encoding import seal_episode
from gymforge.trajectory.schema import (
    LINE_ADAPTER,
    AnyLine,
    EpisodeRecord,
    RunSealRecord,
    StepRecord,
    chain_digest,
    component_totals,
    load_line,
)
from gymforge.trajectory.seal import record_label
from gymforge.wording import plural


@dataclass
class EpisodeLog:
    """The lines of one episode as read back; ``end`` is None if the episode is incomplete."""

    episode_id: str
    steps: list[StepRecord] = field(default_factory=list)
    end: EpisodeRecord | None = None
    raw: list[dict[str, Any]] = field(default_factory=list)
    first_line: int = 0

    def take(self, raw: dict[str, Any], rec: StepRecord | EpisodeRecord) -> bool:
        """Append one of the episode's lines (``raw`` as read, ``rec`` its model); True when
        it is the episode record that ends the episode."""
        self.raw.append(raw)
        if isinstance(rec, StepRecord):
            self.steps.append(rec)
            return False
        self.end = rec
        return True


def read_records(
    path: str | Path,
) -> Iterator[tuple[int, dict[str, Any], AnyLine]]:
    """Yield ``(line_number, raw_dict, model)`` of every line, run seals included;
    IntegrityError on bad text, JSON or schema."""
    with open(path, "rb") as fh:
        for n, data in enumerate(fh, 1):
            if not data.strip():
                continue
            try:
                raw = load_line(data.decode("utf-8"))
                yield n, raw, LINE_ADAPTER.validate_python(raw)
            except UnicodeDecodeError:
                raise IntegrityError(f"line {n}: not UTF-8 text") from None
            except json.JSONDecodeError as err:
                raise IntegrityError(f"line {n}: not JSON ({err.msg}); truncated write?") from err
            except ValidationError as err:
                e = err.errors()[0]
                loc = ".".join(str(x) for x in e["loc"])
                raise IntegrityError(
                    f"line {n}: breaks the trajectory schema at {loc}: {e['msg']}"
                ) from err


def read_episodes(path: str | Path) -> list[EpisodeLog]:
    """Group a file's records by episode, in file order (run seals are skipped: checking
    them is ``gymforge.trajectory.check.check_file``'s)."""
    episodes: dict[str, EpisodeLog] = {}
    for n, raw, rec in read_records(path):
        if isinstance(rec, RunSealRecord):
            continue
        log = episodes.get(rec.episode_id)
        if log is None:
            log = episodes[rec.episode_id] = EpisodeLog(rec.episode_id, first_line=n)
        elif log.end is not None:
            raise IntegrityError(f"line {n}: record after the end of episode {rec.episode_id}")
        log.take(raw, rec)
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
            raise IntegrityError(
                f"{where}: digest mismatch at record {i} ({record_label(raw)}): the "
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
            f"{where}: episode record counts {plural(end.steps, 'step')}, file holds "
            f"{len(log.steps) - 1}"
        )
    # a policy that stopped (its context filled up, its harness exited) ends the episode
    # itself: no terminal env step
    cut_by_policy = end.truncated and end.failure_reason in POLICY_STOP_REASONS
    ended = last.terminated or last.truncated
    if (len(log.steps) < 2 or not ended) and not cut_by_policy:
        raise IntegrityError(f"{where}: the last step does not end the episode")
    totals = component_totals([s.reward_components for s in log.steps])
    given_by_steps = {
        "reward_components": totals,
        "reward": math.fsum(totals.values()),
        "terminated": last.terminated and not cut_by_policy,
        "truncated": last.truncated or cut_by_policy,
        "success": bool(last.info.get("success")) and not cut_by_policy,
    }
    if cut_by_policy and ended:
        raise IntegrityError(f"{where}: cut short by the policy after the episode had ended")
    for name, value in given_by_steps.items():
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
        elif isinstance(rec, EpisodeRecord):
            log.end = rec
    return log
