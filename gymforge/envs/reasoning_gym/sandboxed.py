"""reasoning-gym's ``score_answer`` in the sandbox: no model text is evaluated in gymforge.

Some reasoning-gym scorers execute the answer (``eval``, ``sympy.parse_expr``: countdown,
puzzle24, n_queens, spiral_matrix, the polynomial and integration datasets...). So every
answer is scored in a job of its own in the bubblewrap sandbox (``inside.py`` is the job): the
task entry and the answer go in as plain data (a JSON job file), one plain float comes back,
and the job process is thrown away. The sandbox, its binds of the site directories, the
preflight and the decoding of the job's result are shared with the other adapters
(``gymforge.envs.third_party_scoring``); this module is what is reasoning-gym's own: the
payload and the check that the value is a number in [0, 1].
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path
from typing import Any

from gymforge.envs import third_party_scoring as tps
from gymforge.envs.reasoning_gym import inside
from gymforge.envs.third_party_scoring import ScorerError, close_scorer_backend
from gymforge.sandbox import SandboxJob
from gymforge.sandbox.models import Result

__all__ = [
    "ScorerError",
    "close_scorer_backend",
    "outcome_of",
    "require_scorer_sandbox",
    "score_in_sandbox",
    "scoring_job",
]

WHO = "reasoning-gym's scorers"


def require_scorer_sandbox() -> None:
    """Refuse, in one line, a machine where reasoning-gym's scorers cannot run sandboxed."""
    tps.require_scorer_sandbox(WHO)


@cache
def _source() -> str:
    return Path(inside.__file__).read_text(encoding="utf-8")


def scoring_job(
    dataset_cls: type, config_cls: type, config: dict[str, Any], entry: Any, answer: str, site: str
) -> SandboxJob:
    """The job that scores ``answer`` on ``entry`` (all plain data in ``payload.json``)."""
    data = {
        "dataset": [dataset_cls.__module__, dataset_cls.__qualname__],
        "config_class": [config_cls.__module__, config_cls.__qualname__],
        "config": config,
        "entry": entry,
    }
    payload = json.dumps({"data": inside.encode(data), "answer": answer})
    env = {inside.SITE_ENV: site, inside.MODULE_ENV: dataset_cls.__module__}
    return tps.scoring_job(_source(), {inside.PAYLOAD: payload}, env)


def outcome_of(result: Result) -> tuple[float, dict[str, Any]]:
    """``(score, output facts)`` of a scoring job, or ``ScorerError``."""
    value, facts = tps.call_value(result)
    if isinstance(value, int | float) and math.isfinite(value) and 0.0 <= value <= 1.0:
        return float(value), facts
    facts["status"] = result.status.value
    raise ScorerError(f"the scorer returned {str(value)[:80]!r}, not a number in [0, 1]", facts)


async def score_in_sandbox(
    dataset_cls: type, config_cls: type, config: dict[str, Any], entry: Any, answer: str
) -> tuple[float, dict[str, Any]]:
    """reasoning-gym's score of ``answer`` on ``entry``, computed in the sandbox."""
    backend = tps.scorer_backend(WHO)
    job = scoring_job(dataset_cls, config_cls, config, entry, answer, tps.site_env(backend))
    return outcome_of(await backend.arun(job))
