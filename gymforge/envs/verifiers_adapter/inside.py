"""The scoring job: what runs INSIDE the sandbox to score one rollout with a Verifiers rubric.

This file is the source of a function-call job (``SandboxJob.calls``), loaded in a jail by the
system ``python3 -I -S``: standard library only, plus the read-only directories the host binds
and names in ``SITE_ENV`` (the site directories where Verifiers lives and, when the
environment module is found elsewhere, the directory it was found in). It never imports
gymforge (which the jail does not hold).

Loading the job loads the environment exactly as the adapter does (Verifiers'
``load_environment(MODULE)``: the user's own module, trusted, never the completion). The one
call, ``score()``, reads ``PAYLOAD`` (plain JSON: the rollout's state as data, with its
prompt, completion messages, answer, info and trajectory), runs the rubric's
``score_rollout`` and ``cleanup`` on it, and returns ``{"reward": float, "metrics": {name:
float}}``. Whatever the completion makes the rubric do (execute code, exit, print, loop,
patch modules) happens in this one job process, which the sandbox throws away afterwards.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from typing import Any

PAYLOAD = "payload.json"
SITE_ENV = "GF_SITE_DIRS"
MODULE_ENV = "GF_VF_MODULE"

_env: Any = None


def score() -> dict[str, Any]:
    """The one call: the rubric's reward and per-function metrics on the payload's state."""
    import verifiers.legacy as vf

    with open(PAYLOAD, encoding="utf-8") as f:
        payload = json.load(f)
    state = vf.State(payload["state"])

    async def run() -> None:
        await _env.rubric.score_rollout(state)
        await _env.rubric.cleanup(state)

    asyncio.run(run())
    metrics = state.get("metrics") or {}
    return {
        "reward": float(state.get("reward") or 0.0),
        "metrics": {str(k): float(v) for k, v in metrics.items()},
    }


def _random_fingerprints() -> None:
    """Hugging Face ``datasets`` fingerprints a new dataset by pickling its table, which
    fails in the job's interpreter (pyarrow's ``MonthDayNano`` type cannot be located by
    pickle there). The job never caches a dataset, so a random fingerprint (what ``datasets``
    itself falls back to for an unhashable transform) changes nothing it computes."""
    try:
        import datasets.arrow_dataset as arrow_dataset
        import datasets.fingerprint as fingerprint
    except ImportError:
        return
    arrow_dataset.generate_fingerprint = lambda dataset: fingerprint.generate_random_fingerprint()


def _load() -> None:
    """Job start-up (trusted): the bound directories on the path, the environment loaded, so
    ``score`` measures the rubric and not the imports."""
    global _env
    for path in filter(None, os.environ.get(SITE_ENV, "").split(os.pathsep)):
        if path not in sys.path:
            sys.path.append(path)
    logging.disable(logging.WARNING)  # Verifiers' loader logs; only failures matter here
    _random_fingerprints()
    from verifiers.legacy.utils.env_utils import load_environment

    _env = load_environment(os.environ[MODULE_ENV])


if __name__ == "solution":  # loaded as the job's candidate module, never on the host
    _load()
