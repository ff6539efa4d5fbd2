"""``gymforge.sandbox``: run untrusted code, get facts back.

One interface (``Backend``: ``run``, ``run_many``, ``arun``) over several backends:

- ``LocalBackend`` (default): N long-lived bubblewrap sandboxes, each with a pre-forked Python
  zygote that forks one child per job (no network, read-only root, tmpfs job directory, no
  capabilities, an unprivileged uid per worker, rlimits, optional seccomp, wall-clock kill
  from outside, output caps, every job process killed afterwards);
- ``DockerBackend`` (the same zygotes in long-lived podman/Docker containers; select it with
  ``GYMFORGE_SANDBOX=docker``), ``RayBackend`` (local backends on Ray actors);
- ``UnsafeBackend``: no isolation, only on explicit request.

Use ``get_backend()`` to obtain one; it refuses to run without isolation unless asked to.
Function-call service: ``SandboxJob(calls=[Call(...)])`` (batch) or ``backend.session(job)``.
"""

from gymforge.sandbox.backend import Backend, BaseBackend, IsolationUnavailableError
from gymforge.sandbox.factory import get_backend
from gymforge.sandbox.languages import LANGUAGES, Language, register_language
from gymforge.sandbox.local import LocalBackend, UnsafeBackend
from gymforge.sandbox.models import (
    Call,
    CallResult,
    CallStatus,
    Limits,
    LimitsHit,
    LoadInfo,
    Result,
    SandboxJob,
    Status,
)
from gymforge.sandbox.session import CallSession, CandidateCallError

__all__ = [
    "LANGUAGES",
    "Backend",
    "BaseBackend",
    "Call",
    "CallResult",
    "CallSession",
    "CallStatus",
    "CandidateCallError",
    "IsolationUnavailableError",
    "Language",
    "Limits",
    "LimitsHit",
    "LoadInfo",
    "LocalBackend",
    "Result",
    "SandboxJob",
    "Status",
    "UnsafeBackend",
    "get_backend",
    "register_language",
]
