"""A real code judge for the code-judge attacks in this corpus (imported as a plain module):
a one-worker bubblewrap ``LocalBackend`` on test-only uids and the production ``CodeJudge``
on it. Tests that use it skip, with the reason, where bubblewrap cannot run.

``GYMFORGE_REDTEAM_SANDBOX=docker`` (``make test-containers``) puts every sandbox of the
corpus's fixtures on the container backend instead; the attacks themselves are unchanged, and
the CLIs the corpus starts keep the default backend (their attacks are about this host)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from gymforge.sandbox import Limits
from gymforge.sandbox.docker import DockerBackend, docker_available
from gymforge.sandbox.doctor import bwrap_works
from gymforge.sandbox.local import LocalBackend, ZygotePool
from gymforge.verify.code import CodeJudge, JudgeConfig

# One uid, used by one module at a time (module-scoped fixtures), apart from the corpus's
# session-wide sandbox (+90 and up).
UID_BASE = 100_000 + (os.getpid() % 5000) * 100 + 44

LIMITS = Limits(wall_time=6, cpu_time=4, memory_bytes=256 << 20, call_timeout=3.0)


CORPUS_SANDBOX = os.environ.get("GYMFORGE_REDTEAM_SANDBOX") or "local"


def corpus_backend(workers: int, uid_base: int, **kw: Any) -> ZygotePool:
    """The corpus's sandbox: bubblewrap, or the container backend under
    ``GYMFORGE_REDTEAM_SANDBOX=docker``; skips (with the reason) where it cannot run."""
    if CORPUS_SANDBOX == "docker":
        ok, why = docker_available()
        if not ok:
            pytest.skip(why)
        langs = ("c", "cpp", "javascript")
        return DockerBackend(workers, uid_base=uid_base, languages=langs, host_grace=5.0, **kw)
    ok, why = bwrap_works()
    if not ok:
        pytest.skip(f"bubblewrap sandbox unavailable: {why}")
    return LocalBackend(workers=workers, uid_base=uid_base, host_grace=5.0, **kw)


def judge_on_bwrap() -> Iterator[CodeJudge]:
    backend = corpus_backend(1, UID_BASE)
    yield CodeJudge(backend, JudgeConfig(limits=LIMITS, stdio_limits=LIMITS))
    backend.close()
