"""The zygote's cleanup after every job: SIGKILL every other process in the worker's namespace
but the fork template until ``/proc`` shows none (``kill_rest``), reap them, wipe the job
directory and remove System V IPC objects (``cleanup``): nothing of a job survives it.
Standard library only (copied into the sandbox next to ``zygote.py``, which imports it).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from typing import TYPE_CHECKING

# The sandbox runs these files with their own directory on sys.path (sibling imports by
# bare name); the type checker sees the same files as modules of this package.
if TYPE_CHECKING:
    from gymforge.sandbox import jail, jobdir
    from gymforge.sandbox.template import ForkTemplate
else:
    import jail
    import jobdir


class JobCleanup:
    """The cleanup half of ``zygote.Zygote`` (its base class), over the zygote's state: its
    job directory, whether it is pid 1 and owns its IPC namespace, the session ids of the
    job's processes, and the fork template (spared while it is alive)."""

    jobdir: str
    pid1: bool
    own_ipc: bool
    job_sids: set[int]
    template: ForkTemplate

    def kill_rest(self) -> int:
        """SIGKILL and reap every job process; returns how many were found (0 normally)."""
        found = 0
        for _ in range(1000):
            others = self.others()
            if not others:
                return found
            found = max(found, len(others))
            if self.pid1 and not self.template.alive():  # kill(-1) would spare no one
                with contextlib.suppress(ProcessLookupError):
                    os.kill(-1, signal.SIGKILL)
            else:
                for pid in others:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGKILL)
            self.reap_all()
            if self.others():
                time.sleep(0.002)
        return found

    def others(self) -> list[int]:
        keep = {"1", str(self.template.pid) if self.template.alive() else "1"}
        if self.pid1:
            return [int(p) for p in os.listdir("/proc") if p.isdigit() and p not in keep]
        pids = []
        for p in os.listdir("/proc"):
            if not p.isdigit() or int(p) == os.getpid():
                continue
            try:
                with open(f"/proc/{p}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[3]) in self.job_sids:
                pids.append(int(p))
        return pids

    def reap_all(self) -> None:
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return

    def cleanup(self) -> bool:
        """Wipe the job directory (and IPC objects); True when it is empty afterwards."""
        self.job_sids.clear()
        try:
            # (not ours on a Docker tmpfs: then the job cannot chmod it either)
            with contextlib.suppress(PermissionError):
                os.chmod(self.jobdir, 0o700)
            jobdir.wipe(self.jobdir)
            if self.own_ipc:
                jail.ipc_cleanup()
            return True  # wipe raises if anything could not be removed
        except Exception:
            return False
