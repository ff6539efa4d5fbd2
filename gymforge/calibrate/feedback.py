"""Calibration feeds training: curriculum knob moves and the hard-negative pool.

**Curriculum.** The measured outcomes are replayed into a fresh
``gymforge.tasks.Curriculum`` (with the calibration band): starting at each family's lowest
level, the outcomes measured at the current level are ``record``-ed and ``update`` moves the
level up (pass rate above the band) or down (below it), until no family moves. A family
that would move back to a level it already left oscillates between two levels with no level
in the band; it stays at the lower one and the note says so. The result is the suggested
starting level per family plus every move, with the pass rate that caused it.

**Hard negatives.** Every training outcome is ``record``-ed into a
``gymforge.tasks.HardNegativePool`` persisted in SQLite (failed tasks enter it; held-out
ones are refused), then ``spawn_variants`` adds the neighbours of the most-failed tasks.
The file is rebuilt from all outcomes on every calibration, so a resumed run never counts
an outcome twice.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gymforge.calibrate.bands import Band
from gymforge.evaluate.episodes import EpisodeStats
from gymforge.evaluate.estimators import DEFAULT_CONFIDENCE, Proportion
from gymforge.tasks.curriculum import Curriculum
from gymforge.tasks.hard_negatives import HardNegativePool
from gymforge.tasks.source import TaskSource


def level_rates(
    stats: Sequence[EpisodeStats], confidence: float = DEFAULT_CONFIDENCE
) -> dict[str, dict[str, dict[str, Any]]]:
    """``{family: {level: {rate, lo, hi, successes, n}}}`` over training episodes."""
    cells: dict[str, dict[int, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for s in stats:
        if s.split == "train":
            cells[s.family][s.difficulty].append(s.success)
    return {
        family: {
            str(level): Proportion(sum(v), len(v), confidence).as_dict()
            for level, v in sorted(levels.items())
        }
        for family, levels in sorted(cells.items())
    }


def curriculum_feedback(
    source: TaskSource, stats: Sequence[EpisodeStats], band: Band, min_samples: int
) -> dict[str, Any]:
    """Suggested curriculum levels from the measured outcomes (see the module docstring)."""
    cur = Curriculum(source, band=(band.lo, band.hi), min_samples=max(1, min_samples))
    start = dict(cur.levels)
    outcomes: dict[tuple[str, int], list[EpisodeStats]] = defaultdict(list)
    for s in stats:
        if s.split == "train" and s.family in cur.levels:
            outcomes[(s.family, s.difficulty)].append(s)
    visited = {family: {level} for family, level in cur.levels.items()}
    settled: dict[str, str] = {}
    moves: list[dict[str, Any]] = []
    ladder_max = max((len(f.levels) for f in source.families.values()), default=0)
    recorded: set[tuple[str, int]] = set()
    for _ in range(2 * ladder_max + 1):
        rates: dict[str, tuple[int, int]] = {}
        for family, level in cur.levels.items():
            if family in settled or (family, level) in recorded:
                continue
            recorded.add((family, level))
            eps = outcomes.get((family, level), [])
            for s in eps:
                cur.record(s.task_id, s.success)
            rates[family] = (sum(s.success for s in eps), len(eps))
        step = cur.update()
        for family, (old, new) in sorted(step.items()):
            wins, n = rates[family]
            if new in visited[family]:
                cur.levels[family] = min(old, new)
                settled[family] = (
                    f"oscillates between levels {min(old, new)} and {max(old, new)}: "
                    f"no level has a pass rate in [{band.lo:g}, {band.hi:g}]"
                )
                continue
            visited[family].add(new)
            moves.append(
                {
                    "family": family,
                    "from": old,
                    "to": new,
                    "direction": "up" if new > old else "down",
                    "pass_rate": wins / n if n else None,
                    "n": n,
                }
            )
        if not step:
            break
    notes = dict(settled)
    for family, level in cur.levels.items():
        if family in notes:
            continue
        eps = outcomes.get((family, level), [])
        ladder = sorted(source.families[family].levels)
        if not eps:
            notes[family] = f"no outcomes measured at level {level}"
        elif len(eps) < min_samples:
            notes[family] = f"only {len(eps)} outcomes at level {level} (< {min_samples})"
        else:
            rate = sum(s.success for s in eps) / len(eps)
            if rate > band.hi and level == ladder[-1]:
                notes[family] = f"too easy even at its top level {level} ({rate:.2f})"
            elif rate < band.lo and level == ladder[0]:
                notes[family] = f"too hard even at its lowest level {level} ({rate:.2f})"
            else:
                notes[family] = f"level {level} pass rate {rate:.2f}"
    return {
        "band": band.as_list(),
        "min_samples": cur.min_samples,
        "start_levels": start,
        "suggested_levels": dict(cur.levels),
        "moves": moves,
        "notes": notes,
        "level_rates": level_rates(stats),
    }


def feed_hard_negatives(
    source: TaskSource,
    stats: Sequence[EpisodeStats],
    path: Path,
    *,
    seed: int = 0,
    spawn_top: int = 5,
) -> dict[str, Any]:
    """Rebuild the SQLite pool at ``path`` from ``stats``; grow variants of the hardest."""
    for suffix in ("", "-journal", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    pool = HardNegativePool(source, path)
    try:
        for s in stats:
            pool.record(s.task_id, s.success)
        failed = len(pool)
        added = pool.spawn_variants(top=spawn_top, seed=seed) if spawn_top > 0 else []
        rows = pool.rows()
        return {
            "path": str(path),
            "tasks": len(rows),
            "failed_tasks": failed,
            "variants_added": len(added),
            "variant_examples": added[:10],
            "refused_heldout": pool.refused_heldout,
            "hardest": [
                {"task_id": t, "attempts": a, "failures": f}
                for t, a, f, origin in sorted(rows, key=lambda r: (-r[2], r[0]))
                if origin == "failed"
            ][:10],
        }
    finally:
        pool.close()
