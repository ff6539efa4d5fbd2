"""The pre-forked job child's warm-up. Standard library only (runs inside the sandbox).

CPython writes to every object it touches (reference counts, the adaptive interpreter's inline
caches, allocator pools), so right after ``fork()`` each such page a job touches first costs a
copy-on-write fault, on the job's critical path. A child that has waited ``child.WARM_AFTER``
without a job (the worker is idle) runs trusted code through the same paths first, so those
faults happen before the job arrives. A busy worker's children skip it: its CPU would only
delay the next job.
"""

from __future__ import annotations

import builtins
import contextlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

# The sandbox runs these files with their own directory on sys.path (sibling imports by
# bare name); the type checker sees the same files as modules of this package.
if TYPE_CHECKING:
    from gymforge.sandbox import wire
else:
    import wire

_WARM_SOURCE = b"""
def f(xs, t, *rest, **kw):
    for i, a in enumerate(xs):
        for j, b in enumerate(xs):
            if i != j and abs(a - b) < t:
                return [len(xs), str(t), {"k": (i, j)}, {a, b}, None, True]
    return sorted(x * 2 for x in xs if x > 0)
"""


def warm_up(job_waiting: Callable[[], bool]) -> None:
    """Pre-fork, run trusted code through the paths every job takes (frame decoding, compile,
    exec, a call, the plain codec, frame encoding) so the copy-on-write faults they cause
    happen now, while the worker is idle, not after the job arrives. Stops as soon as a job
    is waiting. Constant input only; nothing is written to any fd and the namespace is
    dropped. ``atexit`` (built in, and imported by ``_finish`` anyway) is the one import:
    a plain ``python3`` has it too."""
    with contextlib.suppress(Exception):
        import atexit  # noqa: F401 - what ``_finish`` imports

        job: dict[str, Any] = {
            "mode": "calls",
            "argv": [],
            "main": "main.py",
            "rlimits": {"as": 1, "cpu": 2},
        }
        job.update(env=dict(os.environ), calls=[{"id": 0, "name": "f", "blob": 1}], seed=None)
        frame = wire.pack_frame({"op": "job", "job": job}, [_WARM_SOURCE, b"[[[1.5,2.0],0.1],{}]"])
        ((hdr, blobs),) = wire.FrameReader(1 << 20).feed(frame)
        if job_waiting():
            return
        ns: dict[str, Any] = {"__name__": "solution", "__builtins__": builtins}
        exec(compile(blobs[0], "main.py", "exec"), ns)
        for args in ([[1.5, 2.0, 3.0], 0.1], [[1.0, 1.05], 0.1]):
            if job_waiting():
                return
            args, kwargs = wire.loads_plain(wire.dumps_plain([args, {}]))
            value = wire.dumps_plain(ns["f"](*args, **kwargs), 1 << 20)
            wire.pack_frame({"ev": "result", "id": hdr["job"]["calls"][0]["id"]}, (value,))
        ns.clear()
