"""How much of an interval this process spent working, as opposed to waiting idle.

The throughput check scales its wall-clock figures by the machine's measured slowdown
(``machine_speed``), which is fair only for time spent computing or queued for a CPU: a
loaded machine stretches that, and nothing else. A reset that sleeps, waits on I/O or on a
socket is slow on every machine, so the slowdown must not excuse that part.

``busy_seconds()`` is a monotone clock of the work this process can be charged with: its own
CPU time (every thread), the CPU time of the children it has reaped (a sandbox job or a
``git`` it ran and waited for), and the time its threads sat runnable in the kernel's run
queue (``/proc/self/task/*/schedstat``: the delay a loaded machine adds). Over an interval,
``wall - busy`` is the idle wait: time in which this process neither ran nor could have run.

What it cannot see: a child's own run-queue delay, and the CPU of a process it does not
reap (a server on a socket, a long-lived fork server): waiting on those counts as idle.
Where ``schedstat`` is missing (a kernel without ``CONFIG_SCHED_INFO``), run-queue delay
counts as idle too, which can only make the check stricter.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

TASKS = Path("/proc/self/task")


def _run_queue_seconds() -> float:
    """Total seconds this process's live threads have waited runnable for a CPU."""
    total = 0
    try:
        threads = list(TASKS.iterdir())
    except OSError:
        return 0.0
    for thread in threads:
        try:
            fields = (thread / "schedstat").read_text().split()
        except OSError:  # the thread ended, or the kernel keeps no schedstat
            continue
        if len(fields) >= 2 and fields[1].isdigit():
            total += int(fields[1])
    return total / 1e9


def busy_seconds() -> float:
    """This process's CPU + reaped children's CPU + its run-queue delay, in seconds."""
    t = os.times()
    return time.process_time() + t.children_user + t.children_system + _run_queue_seconds()
