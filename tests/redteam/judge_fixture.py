"""A real code judge for the code-judge attacks in this corpus (imported as a plain module):
a one-worker bubblewrap ``LocalBackend`` on test-only uids and the production ``CodeJudge``
on it. Tests that use it skip, with the reason, where bubblewrap cannot run."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from gymforge.sandbox import Limits
from gymforge.sandbox.doctor import bwrap_works
from gymforge.sandbox.local import LocalBackend
from gymforge.verify.code import CodeJudge, JudgeConfig

# One uid, used by one module at a time (module-scoped fixtures), apart from the corpus's
# session-wide sandbox (+90 and up).
UID_BASE = 100_000 + (os.getpid() % 5000) * 100 + 44

LIMITS = Limits(wall_time=6, cpu_time=4, memory_bytes=256 << 20, call_timeout=3.0)


def judge_on_bwrap() -> Iterator[CodeJudge]:
    ok, why = bwrap_works()
    if not ok:
        pytest.skip(f"bubblewrap sandbox unavailable: {why}")
    backend = LocalBackend(workers=1, uid_base=UID_BASE, host_grace=5.0)
    yield CodeJudge(backend, JudgeConfig(limits=LIMITS, stdio_limits=LIMITS))
    backend.close()
