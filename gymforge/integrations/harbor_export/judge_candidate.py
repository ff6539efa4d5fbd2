"""Who the candidate runs as in the exported verifier (inlined into ``judge.py`` at export,
so standard library only): ``nobody`` (uid 65534, no groups) when the script is root, its own
user with ``--as-self`` (``run_as_self``); the resource limits each child gets; and the kill
of every process the candidate left behind."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from typing import Any

CANDIDATE = 65534
"""The uid and gid the candidate's processes run as when this script is root."""
AS_SELF = False
"""``--as-self``: run the candidate as this script's own user (a run outside a container,
where ``nobody`` cannot execute this Python)."""


def run_as_self(on: bool) -> None:
    """``--as-self``: the candidate runs as this script's own user (``AS_SELF``)."""
    global AS_SELF
    AS_SELF = on


def as_candidate() -> dict[str, Any]:
    """``subprocess`` arguments that run a child as the candidate's user (when root)."""
    if os.geteuid() != 0 or AS_SELF:
        return {}
    return {"user": CANDIDATE, "group": CANDIDATE, "extra_groups": []}


def limit(limits: dict[str, Any]) -> None:  # runs in the child, before exec
    cpu = int(limits["cpu_time"]) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    memory = int(limits["memory_bytes"])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))


def in_container() -> bool:
    return os.path.exists("/run/.containerenv") or os.path.exists("/.dockerenv")


def kill_leftovers() -> None:
    """Kill every process of the candidate's user (any it detached from its group); only in
    a container, whose processes of that user are all the candidate's."""
    if as_candidate() and in_container():
        kill = "import os, signal; os.kill(-1, signal.SIGKILL)"
        subprocess.run([sys.executable, "-I", "-c", kill], check=False, **as_candidate())
