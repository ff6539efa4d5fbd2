"""``gymforge serve`` as a child process, for tests and benchmarks that talk to it over the
network: started on 127.0.0.1 with ``--port 0``, its port read from its log, and stopped
afterwards. Every wait is bounded."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

STARTUP_TIMEOUT_S = 120.0
"""How long a server may take to start before it is taken for hung. A bound, not a
budget: ``gymforge serve math`` (it imports sympy and forks its verifier's workers) starts in
about 5 s on a two-core machine with some load, 17 s with six starting at once, and it took
over 30 s (the old bound) there beside a busy test run; a server that hangs still fails."""


class ServeProcess:
    """``gymforge serve ARGS --port 0`` in a subprocess (``env`` and ``cwd`` as given); the
    port is read from its banner and ``url`` is ready once it accepts connections. Startup is
    bounded by ``timeout``; ``stop`` terminates it (then kills it). A context manager too."""

    WS_BANNER = r"ws://127\.0\.0\.1:(\d+)/ws"
    MCP_BANNER = r"on http://127\.0\.0\.1:(\d+)"  # ``serve --mcp``'s

    def __init__(
        self,
        *args: str,
        timeout: float = STARTUP_TIMEOUT_S,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        banner: str = WS_BANNER,
    ) -> None:
        self.banner = banner
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gymforge.cli", "serve", *args, "--port", "0"],
            cwd=cwd,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.port = self._read_port(timeout)
        self.url = f"ws://127.0.0.1:{self.port}"
        self.http_url = f"http://127.0.0.1:{self.port}"

    def _read_port(self, timeout: float) -> int:
        found: list[int] = []
        lines: list[str] = []

        def read() -> None:
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                lines.append(line)
                match = re.search(self.banner, line)
                if match:
                    found.append(int(match.group(1)))
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(timeout)
        if not found:
            self.stop()
            raise RuntimeError(f"gymforge serve did not start in {timeout:g} s: {''.join(lines)}")
        threading.Thread(target=self._drain, daemon=True).start()
        deadline = time.monotonic() + timeout
        while True:  # the banner precedes uvicorn's startup by a moment
            try:
                socket.create_connection(("127.0.0.1", found[0]), timeout=1).close()
                return found[0]
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise
                time.sleep(0.05)

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for _ in self.proc.stderr:
            pass

    def stop(self, grace: float = 10.0) -> int:
        """SIGTERM (a graceful shutdown), SIGKILL after ``grace`` seconds; the exit code."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        return self.proc.returncode

    def __enter__(self) -> ServeProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
