"""A fresh process for the QA checks: another hash seed, another wall clock.

Nondeterminism that one process hides (an RNG seeded from Python's ``hash()``, a date or a
seconds value in an observation, a class-level cache shared by "fresh" instances) only shows
when the same episode runs in a different process at a different time. ``FreshProcess``
starts ``gymforge.qa.fresh_child`` with:

- ``PYTHONHASHSEED`` set to a value other than this process's (checked: the child reports
  ``hash()`` of a probe string, which must differ from ours);
- the wall clock shifted forward by ``CLOCK_SHIFT_S`` (40 days, 7 hours and 13 minutes)
  through libfaketime (found as installed, library or command: :mod:`gymforge.qa.clock`),
  which shifts every clock call of the process (``time.time``, ``datetime.now``, SQLite's
  ``datetime('now')``, C extensions), not just the Python functions a patching library
  replaces, and of the tool subprocesses the environment starts (an MCP tool server); those
  it cannot reach are named (``unshifted``). Monotonic clocks move by the same constant,
  so durations and timeouts are unchanged (libfaketime 0.9.10's ``--exclude-monotonic``
  breaks Python's ``time.sleep``, hence not used). Without libfaketime the child runs
  unshifted and the checks say why (``clock_shift`` is then None, ``clock_note`` the reason).

One child serves every request of a QA run, in order (see ``gymforge.qa.fresh_child``);
requests can be submitted early and collected later, so the suite sends the reference
episodes of ``reset_isolation`` first (they then run where no episode ran before) and the
child works while this process runs the in-process parts. Every wait is bounded: start-up
by ``START_TIMEOUT_S``, a request by its items' ``timeout`` (the child is killed past it).
The child dies with this process however it ends (:mod:`gymforge.qa.lifeline`).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
import tempfile
import time
import weakref
from pathlib import Path
from typing import Any

from gymforge.qa.clock import find_faketime, not_found
from gymforge.qa.clock_files import release
from gymforge.qa.fresh_child import PROBE
from gymforge.qa.lifeline import child_env, kill_group
from gymforge.settings import Settings, inherited_environ, python_hash_seed
from gymforge.verify.services import current

CLOCK_SHIFT_S = 40 * 86400 + 7 * 3600 + 13 * 60
START_TIMEOUT_S = 120.0
ITEM_TIMEOUT_S = 120.0


class FreshProcessError(Exception):
    """The fresh process could not be started or did not answer in time."""


def child_hash_seed() -> str:
    """A ``PYTHONHASHSEED`` different from this process's (whose own may be random)."""
    mine = python_hash_seed()
    return "2" if mine == "1" else "1"


class FreshProcess:
    """The child process. ``request`` sends one op and waits (bounded) for its answer."""

    def __init__(
        self, ref: str, *, shift_clock: bool = True, settings: Settings | None = None
    ) -> None:
        self.ref = ref
        self.hash_seed = child_hash_seed()
        faketime = find_faketime() if shift_clock else None
        self.clock_shift: int | None = CLOCK_SHIFT_S if faketime else None
        self.clock_note = "" if faketime else not_found() if shift_clock else "not shifted"
        self.unshifted: list[str] = []
        """Tool subprocesses of the child that the shifted clock did not reach."""
        self._dir = tempfile.TemporaryDirectory(prefix="gymforge-qa-fresh-")
        # the run's settings cross into the child as its environment, explicitly (the child
        # reads them back with ``Settings.from_environ``): the same sandbox, the same mode
        run_settings = settings if settings is not None else current().settings
        env = child_env(inherited_environ(**run_settings.child_vars()))
        env["PYTHONHASHSEED"] = self.hash_seed
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p and Path(p).is_dir())
        cmd = [sys.executable, "-m", "gymforge.qa.fresh_child", ref]
        if faketime:
            cmd = faketime.wrap(cmd, env, CLOCK_SHIFT_S)
        self._stderr = open(Path(self._dir.name) / "stderr.txt", "w+", encoding="utf-8")  # noqa: SIM115
        self._proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
            cwd=os.getcwd(),
            start_new_session=True,
        )
        self._ready: dict[str, Any] | None = None
        self._buf = b""
        self._started = time.time()
        self._next_id = 0
        self._tickets: dict[str, int] = {}
        self._budget: dict[int, float] = {}
        self._answers: dict[int, dict[str, Any]] = {}
        self._finalizer = weakref.finalize(self, _shutdown, self._proc, self._stderr, self._dir)

    @property
    def workdir(self) -> Path:
        return Path(self._dir.name)

    def describe(self) -> str:
        if self.clock_shift:
            clock = f"the wall clock +{self.clock_shift / 86400:.1f} days"
            if self.unshifted:
                names = "; ".join(self.unshifted[:3])
                clock += f", not reaching its tool subprocesses {names}"
        else:
            clock = f"the real clock ({self.clock_note})"
        return f"a fresh process (PYTHONHASHSEED={self.hash_seed}, {clock})"

    def _line(self, deadline: float) -> dict[str, Any]:
        """The child's next JSON line (read from the raw pipe into our own buffer: a
        buffered reader could hold a second answer that ``select`` would not report)."""
        assert self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                stop(self._proc)
                self.close()
                raise FreshProcessError(f"{self.describe()} did not answer in time (killed)")
            ready, _, _ = select.select([fd], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise FreshProcessError(f"{self.describe()} exited: {self._tail()}")
                self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def _tail(self) -> str:
        self._stderr.flush()
        self._stderr.seek(0)
        lines = [x for x in self._stderr.read().splitlines() if x.strip()]
        return " | ".join(lines[-3:])[:600] or f"exit status {exit_status(self._proc)}"

    def ready(self) -> dict[str, Any]:
        """Wait for the child's start; check that its hash seed and clock really differ."""
        if self._ready is None:
            self._ready = self._line(time.monotonic() + START_TIMEOUT_S)
            if self._ready.get("hash_probe") == hash(PROBE):
                raise FreshProcessError(f"{self.describe()} hashes like this one")
            if self.clock_shift and self._ready["time"] - self._started < self.clock_shift / 2:
                self.clock_shift = None
                self.clock_note = "libfaketime is installed but did not shift the clock here"
        return self._ready

    def submit(self, op: str, items: list[dict[str, Any]], timeout: float = ITEM_TIMEOUT_S) -> int:
        """Send one request now, without waiting; a request equal to one already sent is not
        sent again. Returns the ticket for ``wait``. ``replay`` items are ``{"paths"}`` (one
        episode file each), answered with ``{"episodes": [{"steps", "divergence"}]}`` up to
        the first divergence; ``play`` items are ``{"policy", "pairs"}``, answered with
        ``{"episodes": [records]}``; an item that raised is answered with ``{"error"}``."""
        key = json.dumps([op, items], sort_keys=True)
        if key in self._tickets:
            return self._tickets[key]
        assert self._proc.stdin is not None  # the child reads it once started: no wait here
        self._next_id += 1
        msg = {"id": self._next_id, "op": op, "items": items}
        try:
            self._proc.stdin.write(json.dumps(msg).encode() + b"\n")
            self._proc.stdin.flush()
        except OSError as err:
            raise FreshProcessError(f"{self.describe()} is gone: {self._tail()}") from err
        self._tickets[key] = self._next_id
        self._budget[self._next_id] = timeout * max(1, len(items))
        return self._next_id

    def wait(self, ticket: int) -> list[dict[str, Any]]:
        """The answers of a submitted request. The wait is bounded by the time budgets of
        every request still queued before it, plus a margin."""
        self.ready()
        left = sum(b for t, b in self._budget.items() if t <= ticket and t not in self._answers)
        deadline = time.monotonic() + left + 2
        while ticket not in self._answers:
            answer = self._line(deadline)
            self._answers[answer["id"]] = answer
        answer = self._answers[ticket]
        for name in answer.get("unshifted", []):
            if name not in self.unshifted:
                self.unshifted.append(name)
        if not answer.get("ok"):
            raise FreshProcessError(f"{self.describe()}: {answer.get('error')}")
        results: list[dict[str, Any]] = answer["results"]
        return results

    def request(
        self, op: str, items: list[dict[str, Any]], timeout: float = ITEM_TIMEOUT_S
    ) -> list[dict[str, Any]]:
        """``submit`` then ``wait``."""
        return self.wait(self.submit(op, items, timeout))

    def close(self) -> None:
        self._finalizer()


def _shutdown(
    proc: subprocess.Popen[bytes], stderr: Any, workdir: tempfile.TemporaryDirectory[str]
) -> None:
    """Stop the child (EOF on its stdin, then after 5 s a kill of its whole process group:
    the ``faketime`` wrapper's child and tool subprocesses too) and remove its files. Runs
    once: from ``close``, when the ``FreshProcess`` is garbage-collected, or at exit (after
    Ctrl-C too)."""
    if not ended(proc, 0):
        with contextlib.suppress(OSError):
            if proc.stdin is not None:
                proc.stdin.close()
        ended(proc, 5)
    stop(proc)  # what the direct child left behind, or all of it when it hangs
    if proc.stdout is not None:
        proc.stdout.close()
    stderr.close()
    workdir.cleanup()


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Kill the process group ``proc`` leads and reap ``proc`` (bounded). Before it is reaped
    (its pid still held), the libfaketime pair named by its pid goes: the fresh process's
    own, or its ``faketime`` wrapper's (:mod:`gymforge.qa.clock_files`)."""
    if proc.returncode is None:
        release(proc.pid)
    kill_group(proc.pid)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)


def exit_status(proc: subprocess.Popen[bytes]) -> int | None:
    """``proc``'s exit status as ``Popen.returncode`` gives it, or None while it runs,
    without reaping it where the system can tell (``waitid`` with ``WNOWAIT``)."""
    if proc.returncode is not None or not hasattr(os, "waitid"):
        return proc.poll()
    try:
        info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:  # reaped by someone else
        return proc.poll()
    if info is None:
        return None
    return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status


def ended(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    """Whether ``proc`` has ended within ``timeout`` seconds (polled, not reaped)."""
    deadline = time.monotonic() + timeout
    while exit_status(proc) is None:
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


def prestart(target: Any) -> None:
    """Start the target's fresh process now, without waiting, so that its start-up overlaps
    the work done before it is first needed (a no-op when it cannot start)."""
    with contextlib.suppress(FreshProcessError):
        target.fresh_process()
