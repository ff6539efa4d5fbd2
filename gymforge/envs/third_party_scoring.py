"""Third-party scoring code in the sandbox: no model text is evaluated in a gymforge process.

Adapters judge with another framework's code: reasoning-gym's ``score_answer``, a Verifiers
environment's rubric. That code may execute the answer (``eval``, ``sympy.parse_expr``), so
it runs in a job of its own in the bubblewrap sandbox: the adapter's job source (an
``inside.py`` module, standard library only) gets the task and the answer as plain data (job
files), returns plain values through the function-call service's decoder, and the job
process is thrown away. Whatever an answer makes the scorer do (run code, exit, print, loop,
patch a module) stays in that job: it never touches this process, another answer's score,
or the run. This module is the part both adapters share:

- ``site_dirs`` and ``module_roots``: the host directories the job imports from, bound
  read-only at ``/.gf-site/<i>`` (the site directories in ``sys.path`` order, after any
  directory an environment module was found in outside them);
- ``require_scorer_sandbox``: the preflight, one line when it cannot work here (bubblewrap,
  the sandbox's ``python3`` being this interpreter's ``major.minor``, readable binds);
- ``scorer_backend``: the process's scorer sandboxes (one per set of binds, made on first
  use, closed at exit);
- ``scoring_job`` and ``call_value``: the job, and the decoding of its result.

The job's failure is that episode's ``ScorerError`` (a ``VerifierError``, carrying bounded
facts: status, error, the scorer's output): crash, exception, ``exit``, timeout, output
flood, a value of the wrong shape. Its stdout and stderr are captured by the sandbox and
kept in the facts, cut to ``KEEP_CHARS``; they never reach gymforge's own streams.
"""

from __future__ import annotations

import importlib.util
import os
import stat
import subprocess
import sys
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from gymforge.core.errors import VerifierError
from gymforge.sandbox import Call, Limits, SandboxJob
from gymforge.sandbox.backend import BaseBackend, IsolationUnavailableError
from gymforge.sandbox.models import CallStatus, Result, Status
from gymforge.sandbox.preflight import DOCTOR, UNSAFE_ENV
from gymforge.verify.services import current

MOUNT = "/.gf-site"
KEEP_CHARS = 2_000
"""Characters of the scorer's stdout and of its stderr kept in a verdict's facts."""

UID_OFFSET = 64
"""The scorer sandboxes' uids: ``GYMFORGE_SANDBOX_UID_BASE`` (default 60000) plus this (plus
``UID_STRIDE`` per further set of binds), apart from the code judge's workers."""

SCORER = "scorer"
"""The kind of a scorer sandbox among a run's resources (``RunServices``)."""

UID_STRIDE = 16
MAX_WORKERS = UID_STRIDE

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
    """The host's site directories (where the scorers and their dependencies are installed),
    in ``sys.path`` order."""
    found: list[str] = []
    for entry in sys.path:
        real = os.path.realpath(entry) if entry else ""
        site = real.rstrip("/").endswith(("site-packages", "dist-packages"))
        if site and os.path.isdir(real) and real not in found:
            found.append(real)
    return tuple(found)


def module_roots(module: str) -> tuple[str, ...]:
    """The directories to put on the job's path so that it imports ``module`` as this
    process does: none when its top-level package lives in a site directory, else the
    directory (or, for a namespace package, directories) its top-level name was found in."""
    top = module.split(".")[0]
    spec = importlib.util.find_spec(top)
    if spec is None:
        return ()
    if spec.submodule_search_locations is not None:
        places = [os.path.dirname(os.path.realpath(p)) for p in spec.submodule_search_locations]
    elif spec.origin and os.path.isfile(spec.origin):
        places = [os.path.dirname(os.path.realpath(spec.origin))]
    else:
        return ()
    sites = site_dirs()
    roots: list[str] = []
    for place in places:
        if place not in sites and place not in roots:
            roots.append(place)
    return tuple(roots)


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


def require_scorer_sandbox(who: str, extra: Iterable[str] = ()) -> None:
    """Raise ``IsolationUnavailableError`` (one line) unless ``who`` (e.g. "reasoning-gym's
    scorers") can run in the sandbox here: bubblewrap works (or
    ``GYMFORGE_UNSAFE_NO_ISOLATION=1``), the sandbox's ``python3`` is this interpreter's
    version, and its uids can read the site directories and the ``extra`` ones."""
    from gymforge.sandbox.doctor import bwrap_works
    from gymforge.sandbox.local import default_python

    unsafe = current().settings.unsafe_no_isolation
    if not unsafe:
        ok, why = bwrap_works()
        if not ok:
            raise IsolationUnavailableError(
                f"{who} run in the bubblewrap sandbox, which cannot start "
                f"here: {why}; {DOCTOR} (or set {UNSAFE_ENV}=1 to run them WITHOUT isolation)"
            )
    python = default_python()
    want = "{}.{}".format(*sys.version_info[:2])
    have = _python_version(python)
    if have != want:
        raise IsolationUnavailableError(
            f"{who} run in the sandbox on {python} (Python {have}), but they are installed "
            f"for Python {want}; install python{want} as the system python3; {DOCTOR}"
        )
    if not site_dirs():
        raise IsolationUnavailableError(f"no site-packages directory holds {who} here")
    if os.getuid() == 0 and not unsafe:
        hidden = [d for d in (*extra, *site_dirs()) if not _others_can_read(d)]
        if hidden:
            raise IsolationUnavailableError(
                f"the sandbox's users cannot read {hidden[0]} ({who} import from it "
                "read-only): make it and its parents world-readable"
            )


def bound_dirs(extra: Iterable[str] = ()) -> tuple[str, ...]:
    """The host directories a job imports from, in path order: ``extra``, then the site
    directories."""
    out: list[str] = []
    for d in (*extra, *site_dirs()):
        if d not in out:
            out.append(d)
    return tuple(out)


def scorer_backend(
    who: str, extra: tuple[str, ...] = (), preimport: tuple[str, ...] = ()
) -> BaseBackend:
    """The run's scorer sandbox that binds ``bound_dirs(extra)`` (a resource of the current
    ``RunServices``: created on first use, after ``require_scorer_sandbox(who, extra)``;
    closed at the run's end): ``settings.rg_scorer_workers`` workers (default: the CPU count,
    at most 4). Its fork template imports the trusted modules ``preimport`` from those
    directories once, so each job (a fresh copy of the template) starts with them imported."""
    dirs = bound_dirs(extra)
    services = current()
    settings = services.settings

    def make() -> BaseBackend:
        require_scorer_sandbox(who, extra)

        from gymforge.sandbox.doctor import bwrap_works
        from gymforge.sandbox.local import LocalBackend, UnsafeBackend

        workers = settings.rg_scorer_workers or min(4, os.cpu_count() or 2)
        workers = max(1, min(MAX_WORKERS, workers))
        backend: BaseBackend
        if bwrap_works()[0]:
            binds = tuple((d, f"{MOUNT}/{i}") for i, d in enumerate(dirs))
            base = 60000 if settings.sandbox_uid_base is None else settings.sandbox_uid_base
            uid_base = base + UID_OFFSET + UID_STRIDE * services.count(SCORER)
            inside_dirs = tuple(dst for _, dst in binds)
            backend = LocalBackend(
                workers,
                uid_base=uid_base,
                ro_binds=binds,
                preimport=preimport,
                preimport_path=inside_dirs,
            )
        else:  # require_scorer_sandbox let this through: unsafe execution was asked for
            backend = UnsafeBackend(workers)
        return backend

    return services.resource((SCORER, *dirs, "", *preimport), make)


def close_scorer_backend() -> None:
    """Close every scorer sandbox of the current run (outside a run: of the library default)."""
    current().close_kind(SCORER)


def site_env(backend: BaseBackend, extra: tuple[str, ...] = ()) -> str:
    """The job's import path (``os.pathsep``-joined): where ``backend`` shows
    ``bound_dirs(extra)`` to it."""
    dirs = bound_dirs(extra)
    if getattr(backend, "name", "") == "unsafe":
        return os.pathsep.join(dirs)
    return os.pathsep.join(f"{MOUNT}/{i}" for i in range(len(dirs)))


def scoring_job(
    source: str, files: Mapping[str, str], env: Mapping[str, str], limits: Limits = LIMITS
) -> SandboxJob:
    """A one-call job: ``source`` (an adapter's ``inside.py``) loaded with ``files`` (plain
    data) and ``env``, its ``score()`` called once, the process not reused."""
    return SandboxJob(
        source=source,
        files=dict[str, str | bytes](files),
        calls=[Call(name="score")],
        env={**JOB_ENV, **env},
        limits=limits,
        respawn=False,
    )


def cut(text: str | None) -> str:
    return (text or "")[:KEEP_CHARS]


def call_value(result: Result) -> tuple[Any, dict[str, Any]]:
    """``(the score() call's value, output facts)`` of a scoring job, or ``ScorerError``
    when the call did not return."""
    facts: dict[str, Any] = {}
    if result.stdout:
        facts["scorer_stdout"] = cut(result.stdout)
    if result.stderr:
        facts["scorer_stderr"] = cut(result.stderr)
    call = result.calls[0] if result.calls else None
    if call is not None and call.status is CallStatus.OK:
        return call.value, facts
    if call is not None:
        problem = f"the scorer's call ended: {call.status.value}"
        facts["call_status"] = call.status.value
        if call.error_type or call.error:
            facts["scorer_error"] = cut(f"{call.error_type or ''}: {call.error or ''}")
    elif result.load is not None and not result.load.ok:
        problem = "the scorer could not load"
        facts["scorer_error"] = cut(f"{result.load.error_type or ''}: {result.load.error or ''}")
    else:
        problem = f"the scoring job ended: {result.status.value}"
    facts["status"] = result.status.value
    if result.limits_hit.names():
        facts["limits_hit"] = result.limits_hit.names()
    if result.status is Status.INTERNAL_ERROR and result.error:
        facts["scorer_error"] = cut(result.error)
    raise ScorerError(problem, facts)
