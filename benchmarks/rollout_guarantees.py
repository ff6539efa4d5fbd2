"""What two of a rollout's guarantees cost, against Verifiers: the floor under
``rollout_cpu.py``'s claim.

Claim: none of its own (``rollout_cpu.py`` states the claim, 0.15x Verifiers' CPU per
episode). This measures how far the claim is from the work gymforge does per episode that
no guarantee asks for: the same gymforge side as ``rollout_cpu.py`` (``run()`` on ``math``
with ``openai:bench``, 2,000 single-turn rollouts at concurrency 64, records written with
fsync), and the same side with each of two guarantees taken out, patched into the worker
process only (the library is never changed):

- ``unvalidated``: each record written as its sorted orjson text with the digest chain,
  encoded twice (the digest over the text, then the line with it: a bare writer could do
  with one encoding, so this floor is a little high), without the schema's validation
  (``trajectory.episode_encoding.seal_lines``: the strict JSON, the schema twin's decode
  and comparison, the depth check, the canonical text);
- ``predrawn``: every task drawn before the measured window and handed to ``reset`` from
  a dict, instead of drawn from its id at the reset (``TaskSource.resolve``), as Verifiers
  is handed its prompts ready made;
- ``neither``: both taken out.

Verifiers 0.3.1's ``SingleTurnEnv`` over the same prompts is the anchor where
``.venv-interop`` exists (``make test-interop``), else the bare SDK calls. Sides take turns
(``--reps`` times after ``--warm-reps`` discarded), against one test server in its own
process that answers every side from its cache; figures are medians.

Run: python benchmarks/rollout_guarantees.py [--rollouts 2000] [--reps 5] [--warm-reps 1]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from rollout_cpu import (  # noqa: E402  (a sibling script)
    INTEROP_PYTHON,
    TARGET_VS_VERIFIERS,
    WORKERS,
    interleaved,
    parser,
    run_worker,
)

GYMFORGE_SIDES = ("gymforge", "unvalidated", "predrawn", "neither")


def _unvalidated() -> None:
    """Records encoded as sorted orjson and digest-chained, unvalidated."""
    import orjson

    from gymforge.trajectory import writer

    def encode_episode(self: Any, records: list[dict[str, Any]]) -> list[str]:
        lines, previous = [], ""
        for rec in records:
            text = orjson.dumps(rec, option=orjson.OPT_SORT_KEYS)
            previous = hashlib.sha256(previous.encode() + text).hexdigest()
            lines.append(orjson.dumps({**rec, "digest": previous}).decode())
        return lines

    writer.TrajectoryWriter.encode_episode = encode_episode  # type: ignore[method-assign]


def _predrawn(prompts: list[dict[str, Any]]) -> None:
    """Every task of ``prompts`` drawn now; ``resolve`` hands them out from a dict."""
    from gymforge.tasks.source import TaskSource

    drawn: dict[str, Any] = {}
    resolve = TaskSource.resolve

    def predrawn(self: TaskSource, task_id: str) -> Any:
        task = drawn.get(task_id)
        return task if task is not None else resolve(self, task_id)

    from gymforge.registry.handle import open_env

    source = open_env("math", None).tasks
    assert source is not None
    for p in prompts:
        drawn[p["task_id"]] = source.resolve(p["task_id"])
    TaskSource.resolve = predrawn  # type: ignore[method-assign]


def worker(side: str, args: argparse.Namespace, prompts: list[dict[str, Any]]) -> float:
    if side in ("unvalidated", "neither"):
        _unvalidated()
    if side in ("predrawn", "neither"):
        _predrawn(prompts)
    name = "gymforge" if side in GYMFORGE_SIDES else side
    cpu: float = WORKERS[name](args, prompts)
    return cpu


def main() -> None:
    ap = parser(__doc__.splitlines()[0], list(GYMFORGE_SIDES))
    args = ap.parse_args()
    if args.worker:
        prompts = json.loads(Path(args.prompts).read_text())
        print(f"CPU {worker(args.worker, args, prompts):.6f}", flush=True)
        return

    anchor = "verifiers" if INTEROP_PYTHON.exists() else "bare"
    sides = [*GYMFORGE_SIDES, anchor]

    def run(side: str, prompts_file: str, base_url: str) -> float:
        script = str(HERE / "rollout_cpu.py") if side == anchor else __file__
        return run_worker(side, args, prompts_file, base_url, script)

    cpu = interleaved(sides, args, run)
    n = args.rollouts
    ms = {s: statistics.median(v) / n * 1e3 for s, v in cpu.items()}
    print(f"{'side':<14}{'CPU ms/episode':>16}{'/ ' + anchor:>16}   reps (ms/episode)")
    for s in sides:
        reps = ", ".join(f"{c / n * 1e3:.3f}" for c in cpu[s])
        print(f"{s:<14}{ms[s]:>16.3f}{ms[s] / ms[anchor]:>15.3f}x   {reps}")
    if anchor == "verifiers":
        print(f"rollout_cpu.py's target: {TARGET_VS_VERIFIERS}x Verifiers")


if __name__ == "__main__":
    main()
