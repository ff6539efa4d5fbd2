"""reasoning-gym's ``score_answer`` in the sandbox: no model text is evaluated in gymforge.

Some reasoning-gym scorers execute the answer (``eval``, ``sympy.parse_expr``: countdown,
puzzle24, n_queens, spiral_matrix, the polynomial and integration datasets...). So every
answer is scored in a job of its own in the bubblewrap sandbox (``inside.py`` is the job): the
task entry and the answer go in as plain data (a JSON job file), one plain float comes back
through the function-call service's decoder, and the job process is thrown away. Whatever an
answer makes the scorer do (run code, exit, print, loop, patch a module) stays in that job:
it never touches this process, another answer's score, or the run.

The jail sees reasoning-gym through read-only binds of the site directories it is installed
in (``site_dirs``, mounted at ``/.gf-site/<i>``), run by the sandbox's system ``python3``,
which must be the same ``major.minor`` as this interpreter (the directories hold compiled
wheels). ``require_scorer_sandbox`` refuses, in one line, a machine where that cannot work.

The job's failure is that episode's ``ScorerError`` (a ``VerifierError``, carrying bounded
facts: status, error, the scorer's output): crash, exception, ``exit``, timeout, output flood,
a value that is not a number in [0, 1]. Its stdout and stderr are captured by the sandbox
and kept in the facts, cut to ``KEEP_CHARS``; they never reach gymforge's own streams.
"""

from __future__ import annotations

import json
import math
import os
import stat
import subprocess
import sys
import threading
from functools import cache
from pathlib import Path
from typing import Any

from gymforge.core.errors import VerifierError
from gymforge.envs.reasoning_gym import inside
from gymforge.sandbox import Call, Limits, SandboxJob
from gymforge.sandbox.backend import BaseBackend, IsolationUnavailableError
from gymforge.sandbox.models import CallStatus, Result, Status
from gymforge.sandbox.preflight import DOCTOR, UNSAFE_ENV, unsafe_requested

MOUNT = "/.gf-site"
KEEP_CHARS = 2_000
"""Characters of the scorer's stdout and of its stderr kept in a verdict's facts."""

UID_OFFSET = 64
"""The scorer sandbox's uids: ``GYMFORGE_SANDBOX_UID_BASE`` (default 60000) plus this, apart
from the code judge's workers."""

LIMITS = Limits(
    wall_time=40.0,
    cpu_time=30.0,
    memory_bytes=1 << 30,
    output_bytes=256 << 10,
    call_timeout=20.0,
    return_bytes=4096,
    processes=8,
    open_files=128,
)
"""Per answer. ``call_timeout`` bounds the start-up imports (sympy, numpy: about a second on
a loaded machine) and, separately, the scorer's call."""

JOB_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


class ScorerError(VerifierError):
    """The third-party scorer did not return a score (it crashed, exited, timed out...).
    ``facts`` (bounded) say how; the episode is a verifier error, never the run's end."""

    def __init__(self, message: str, facts: dict[str, Any]) -> None:
        super().__init__(message)
        self.facts = facts


def site_dirs() -> tuple[str, ...]:
    """The host's site directories (where reasoning-gym and its dependencies are installed),
    in ``sys.path`` order."""
    found: list[str] = []
    for entry in sys.path:
        real = os.path.realpath(entry) if entry else ""
        site = real.rstrip("/").endswith(("site-packages", "dist-packages"))
        if site and os.path.isdir(real) and real not in found:
            found.append(real)
    return tuple(found)


def _others_can_read(path: str) -> bool:
    """Whether another uid can read ``path`` (every ancestor searchable, itself readable)."""
    p = Path(path)
    for part in [p, *p.parents]:
        mode = part.stat().st_mode
        if not mode & stat.S_IXOTH:
            return False
    return bool(p.stat().st_mode & stat.S_IROTH)


@cache
def _python_version(python: str) -> str:
    out = subprocess.run(
        [python, "-I", "-S", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    return out.stdout.strip() or f"unknown ({out.stderr.strip()[:80]})"


def require_scorer_sandbox() -> None:
    """Raise ``IsolationUnavailableError`` (one line) unless reasoning-gym's scorers can run
    in the sandbox here: bubblewrap works (or ``GYMFORGE_UNSAFE_NO_ISOLATION=1``), the
    sandbox's ``python3`` is this interpreter's version, and its uids can read the site
    directories."""
    from gymforge.sandbox.doctor import bwrap_works
    from gymforge.sandbox.local import default_python

    unsafe = unsafe_requested()
    if not unsafe:
        ok, why = bwrap_works()
        if not ok:
            raise IsolationUnavailableError(
                f"reasoning-gym's scorers run in the bubblewrap sandbox, which cannot start "
                f"here: {why}; {DOCTOR} (or set {UNSAFE_ENV}=1 to run them WITHOUT isolation)"
            )
    python = default_python()
    want = "{}.{}".format(*sys.version_info[:2])
    have = _python_version(python)
    if have != want:
        raise IsolationUnavailableError(
            f"reasoning-gym's scorers run in the sandbox on {python} (Python {have}), but "
            f"reasoning-gym is installed for Python {want}; install python{want} as the "
            f"system python3; {DOCTOR}"
        )
    if not site_dirs():
        raise IsolationUnavailableError("no site-packages directory holds reasoning-gym here")
    if os.getuid() == 0 and not unsafe:
        hidden = [d for d in site_dirs() if not _others_can_read(d)]
        if hidden:
            raise IsolationUnavailableError(
                f"the sandbox's users cannot read {hidden[0]} (reasoning-gym's scorers import "
                "from it read-only): make it and its parents world-readable"
            )


_lock = threading.Lock()
_backend: BaseBackend | None = None


def scorer_backend() -> BaseBackend:
    """The process's one scorer sandbox (created on first use, closed at exit):
    ``GYMFORGE_RG_SCORER_WORKERS`` workers (default: the CPU count, at most 4)."""
    global _backend
    with _lock:
        if _backend is None:
            import atexit

            from gymforge.sandbox.local import LocalBackend, UnsafeBackend

            require_scorer_sandbox()
            workers = int(
                os.environ.get("GYMFORGE_RG_SCORER_WORKERS") or min(4, os.cpu_count() or 2)
            )
            binds = tuple((d, f"{MOUNT}/{i}") for i, d in enumerate(site_dirs()))
            from gymforge.sandbox.doctor import bwrap_works

            if bwrap_works()[0]:
                base = int(os.environ.get("GYMFORGE_SANDBOX_UID_BASE") or 60000)
                _backend = LocalBackend(max(1, workers), uid_base=base + UID_OFFSET, ro_binds=binds)
            else:  # require_scorer_sandbox let this through: unsafe execution was asked for
                _backend = UnsafeBackend(max(1, workers))
            atexit.register(close_scorer_backend)
        return _backend


def close_scorer_backend() -> None:
    global _backend
    with _lock:
        b, _backend = _backend, None
    if b is not None:
        b.close()


@cache
def _source() -> str:
    return Path(inside.__file__).read_text(encoding="utf-8")


def _site_env(backend: BaseBackend) -> str:
    if getattr(backend, "name", "") == "unsafe":
        return os.pathsep.join(site_dirs())
    return os.pathsep.join(f"{MOUNT}/{i}" for i in range(len(site_dirs())))


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
    return SandboxJob(
        source=_source(),
        files={inside.PAYLOAD: payload},
        calls=[Call(name="score")],
        env={**JOB_ENV, inside.SITE_ENV: site, inside.MODULE_ENV: dataset_cls.__module__},
        limits=LIMITS,
        respawn=False,
    )


def _cut(text: str | None) -> str:
    return (text or "")[:KEEP_CHARS]


def outcome_of(result: Result) -> tuple[float, dict[str, Any]]:
    """``(score, output facts)`` of a scoring job, or ``ScorerError``."""
    facts: dict[str, Any] = {}
    if result.stdout:
        facts["scorer_stdout"] = _cut(result.stdout)
    if result.stderr:
        facts["scorer_stderr"] = _cut(result.stderr)
    call = result.calls[0] if result.calls else None
    if call is not None and call.status is CallStatus.OK:
        value = call.value
        if isinstance(value, int | float) and math.isfinite(value) and 0.0 <= value <= 1.0:
            return float(value), facts
        problem = f"the scorer returned {str(value)[:80]!r}, not a number in [0, 1]"
    elif call is not None:
        problem = f"the scorer's call ended: {call.status.value}"
        facts["call_status"] = call.status.value
        if call.error_type or call.error:
            facts["scorer_error"] = _cut(f"{call.error_type or ''}: {call.error or ''}")
    elif result.load is not None and not result.load.ok:
        problem = "the scorer could not load"
        facts["scorer_error"] = _cut(f"{result.load.error_type or ''}: {result.load.error or ''}")
    else:
        problem = f"the scoring job ended: {result.status.value}"
    facts["status"] = result.status.value
    if result.limits_hit.names():
        facts["limits_hit"] = result.limits_hit.names()
    if result.status is Status.INTERNAL_ERROR and result.error:
        facts["scorer_error"] = _cut(result.error)
    raise ScorerError(problem, facts)


async def score_in_sandbox(
    dataset_cls: type, config_cls: type, config: dict[str, Any], entry: Any, answer: str
) -> tuple[float, dict[str, Any]]:
    """reasoning-gym's score of ``answer`` on ``entry``, computed in the sandbox."""
    backend = scorer_backend()
    job = scoring_job(dataset_cls, config_cls, config, entry, answer, _site_env(backend))
    return outcome_of(await backend.arun(job))
