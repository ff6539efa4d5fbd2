"""An interrupted or killed ``gymforge qa`` leaves no fresh-process child (issue 36, item 5:
one was found at 100% CPU 24 minutes after the run was interrupted).

``gymforge qa`` runs on an environment whose reset stays busy, so the fresh child is mid-
request (not reading its stdin, where it would see EOF) when the test kills ``qa`` with
SIGKILL (no cleanup in ``qa`` at all) or SIGINT (Ctrl-C: ``qa``'s own cleanup). Then no
process that inherited the run's marker (the child, the ``faketime`` wrapper between them)
may be left. Every wait is a bounded polling loop.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gymforge.qa.clock_files import SHM_DIR, pair_files

ROOT = Path(__file__).resolve().parents[2]
POLLS = 1200  # x 0.1 s, plus a /proc scan each: generous for a loaded machine
pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")


def marked(marker: str) -> set[int]:
    """Pids of the processes whose environment holds ``marker``."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if marker.encode() in environ and state not in ("Z", "X"):
            found.add(int(entry.name))
    return found


@contextlib.contextmanager
def sigint_not_ignored() -> Iterator[None]:
    """A process started inside sees SIGINT as a terminal's Ctrl-C delivers it. A child
    inherits an ignored SIGINT (a runner started in the background ignores it), and then
    ``qa`` never sees the signal the test sends, and runs on until its reset gives up."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)  # exec resets it to the default
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
def test_no_child_outlives_an_interrupted_qa(tmp_path: Path, sig: signal.Signals) -> None:
    busy = tmp_path / "busy"
    busy.mkdir()
    marker = f"GYMFORGE_TEST_BUSY_DIR={busy}"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "GYMFORGE_TEST_BUSY_DIR": str(busy),
    }
    cmd = [sys.executable, "-m", "gymforge.cli", "qa", "tests.qa.slow_env:BusyResetEnv"]
    cmd += ["--episodes", "2", "--check", "reset_isolation"]
    with open(tmp_path / "qa.log", "wb") as log, sigint_not_ignored():
        qa = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=log, stderr=log, start_new_session=True
        )
    try:
        children: set[int] = set()
        for _ in range(POLLS):  # until the fresh child is busy in a reset
            busy_pids = {int(p.name.split("-")[1]) for p in busy.glob("busy-*")}
            children = marked(marker) - {qa.pid}
            if busy_pids & children or qa.poll() is not None:
                break
            time.sleep(0.1)
        assert qa.poll() is None, (tmp_path / "qa.log").read_text()[-2000:]
        assert busy_pids & children, f"the fresh child never got busy: {busy_pids} {children}"
        os.kill(qa.pid, sig)
        try:  # bounded, and generous: once, beside a vLLM engine on both cores, 60 s was not
            qa.wait(timeout=180)
        except subprocess.TimeoutExpired:
            busy_now = sorted(p.name for p in busy.glob("busy-*"))
            log = (tmp_path / "qa.log").read_text(errors="replace")[-2000:]
            raise AssertionError(
                f"qa ran on 180 s after {sig.name} (busy: {busy_now}): {log}"
            ) from None
        left = marked(marker)
        for _ in range(POLLS):
            if not left:
                break
            time.sleep(0.1)
            left = marked(marker)
        assert not left, f"still running after qa ended: {sorted(left)}"
        if sig == signal.SIGINT:  # nor libfaketime's files (gymforge.qa.clock_files)
            pairs = [p.name for pid in children for p in pair_files(pid)]
            assert not [p for p in pairs if (SHM_DIR / p).exists()]
    finally:
        for pid in marked(marker):  # never leave them behind, whatever happened
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if qa.poll() is None:
            qa.kill()
            qa.wait()
