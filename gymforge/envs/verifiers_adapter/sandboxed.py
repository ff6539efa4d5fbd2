"""A Verifiers rubric in the sandbox: no completion is evaluated in gymforge.

A rubric's reward functions and parser are the environment author's code, and they may
execute the completion (an ``eval``, a code runner). So every rollout is scored in a job of
its own in the bubblewrap sandbox (``inside.py`` is the job), through the mechanism the
reasoning-gym adapter uses (``gymforge.envs.third_party_scoring``): the job loads the
environment module the way the adapter does, from read-only binds of the site directories
and of the directory the module was found in; the rollout's state goes in as plain JSON
(``plain``: prompt and completion messages, answer, info, the trajectory with its step
rewards; objects that are not data stay behind); ``{"reward", "metrics"}`` of plain floats
comes back. A rubric that crashes, exits, loops or floods raises ``ScorerError``: that
episode's verifier error, with bounded facts. Its output stays in the facts.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from gymforge.envs import third_party_scoring as tps
from gymforge.envs.third_party_scoring import ScorerError
from gymforge.envs.verifiers_adapter import inside

WHO = "Verifiers rubrics"

MAX_METRICS = 64
"""Reward functions a rubric may report; more is a malformed result."""

LIMITS = tps.LIMITS.model_copy(update={"wall_time": 90.0, "cpu_time": 60.0, "call_timeout": 45.0})
"""Per rollout. The job's start-up imports Verifiers (about 3.5 s of CPU) and Hugging Face
``datasets`` (1.7 s) and loads the environment: 8 s on a loaded 2-core machine, so the
start-up budget (``call_timeout``, which also bounds the rubric's call) is wider than
reasoning-gym's."""

PREIMPORT = ("verifiers.legacy",)
"""Imported once by the sandbox's fork template (trusted code from the read-only site
directories): each rollout's job is a fresh copy of it, so it skips that import, and what a
completion does to it stays in its own copy. Not ``datasets``: a child forked from a
template that imported pyarrow fails to load (no output), so each job imports it."""

JOB_ENV = {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",  # timings in the captured output: not replayable
    "TQDM_DISABLE": "1",
    "HOME": "/tmp",
}

_DROP = frozenset({"client", "usage_tracker", "timing", "usage", "sampling_args", "tool_defs"})
"""State keys that hold the rollout's machinery, not its data."""


def plain(value: Any) -> Any:
    """``value`` as plain JSON data: containers and scalars as they are, a pydantic message
    as its fields; anything else (an open gym environment, a client) is left out (None)."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, bool | int | str) or value is None:
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return plain(dump(exclude_none=True))
    return None


def plain_state(state: Mapping[str, Any]) -> dict[str, Any]:
    """The rollout state as the rubric's plain input (``dict.items``: no forwarding)."""
    items = dict.items(state) if isinstance(state, dict) else state.items()
    return {
        str(k): plain(v)
        for k, v in items
        if k not in _DROP and k not in ("reward", "metrics", "error")
    }


def require(module: str) -> None:
    """Refuse, in one line, a machine where ``module``'s rubric cannot run sandboxed."""
    tps.require_scorer_sandbox(WHO, tps.module_roots(module))


@cache
def _source() -> str:
    return Path(inside.__file__).read_text(encoding="utf-8")


def _decode(value: Any, facts: dict[str, Any]) -> tuple[float, dict[str, float]]:
    reward = value.get("reward") if isinstance(value, dict) else None
    metrics = value.get("metrics") if isinstance(value, dict) else None
    good = isinstance(reward, int | float) and math.isfinite(reward)
    good = good and isinstance(metrics, dict) and len(metrics) <= MAX_METRICS
    if good and isinstance(metrics, dict):
        ok = all(
            isinstance(k, str) and len(k) <= 200 and isinstance(v, int | float) and math.isfinite(v)
            for k, v in metrics.items()
        )
        if ok and isinstance(reward, int | float):
            return float(reward), {k: float(v) for k, v in metrics.items()}
    raise ScorerError(f"the rubric returned {str(value)[:80]!r}, not a reward and metrics", facts)


async def score_in_sandbox(
    module: str, state: Mapping[str, Any]
) -> tuple[float, dict[str, float], dict[str, Any]]:
    """``(reward, metrics, output facts)`` of ``module``'s rubric on ``state``, in the
    sandbox."""
    extra = tps.module_roots(module)
    backend = tps.scorer_backend(WHO, extra, PREIMPORT)
    env = {
        **JOB_ENV,
        inside.SITE_ENV: tps.site_env(backend, extra),
        inside.MODULE_ENV: module,
    }
    payload = json.dumps({"state": plain_state(state)})
    job = tps.scoring_job(_source(), {inside.PAYLOAD: payload}, env, LIMITS)
    value, facts = tps.call_value(await backend.arun(job))
    reward, metrics = _decode(value, facts)
    return reward, metrics, facts
