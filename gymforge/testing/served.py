"""``gymforge serve`` as a child process, for tests and benchmarks that talk to it over the
network: started on 127.0.0.1 with ``--port 0``, its ``ws://`` URL read from its log, and
stopped afterwards. Every wait is bounded."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_URL = re.compile(r"ws://127\.0\.0\.1:\d+")


@contextmanager
def served(
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 60.0,
) -> Iterator[str]:
    """``gymforge serve ARGS --port 0``; yields its ``ws://`` URL (start-up bounded by
    ``timeout``), then terminates it (killed if it does not stop within 10 s)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "gymforge.cli", "serve", *args, "--port", "0"],
        env=env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    found: list[str] = []

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            match = _URL.search(line)
            if match:
                found.append(match.group(0))
                break
        for _ in proc.stderr:  # drain, so the server never blocks on a full pipe
            pass

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + timeout
    while not found and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        if not found:
            raise RuntimeError(
                f"gymforge serve {' '.join(args)} did not start (exit {proc.poll()})"
            )
        yield found[0]
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
