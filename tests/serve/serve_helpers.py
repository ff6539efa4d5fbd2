"""Helpers of the server tests: refs to the test environments and a raw protocol client."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

from gymforge.serve.launch import ServerThread

HERE = Path(__file__).resolve().parent
ENVS = HERE / "serve_envs.py"
TOKEN = "test-token-0123456789"


def env_ref(name: str) -> str:
    """A file-path ref to an environment in serve_envs.py (works from any cwd)."""
    return f"{ENVS}:{name}"


class Raw:
    """A raw protocol client over the sync websockets client: send dicts, read dicts."""

    def __init__(self, server: ServerThread, token: str | None = TOKEN, **kw: Any) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._cm = connect(
            f"{server.url}/ws",
            additional_headers={**headers, **kw.pop("headers", {})},
            max_size=None,
            compression=None,
            **{"open_timeout": 10, **kw},
        )
        self.ws: ClientConnection = self._cm.__enter__()
        self.hello = self.recv()

    def send(self, message: dict[str, Any] | str) -> None:
        self.ws.send(message if isinstance(message, str) else json.dumps(message))

    def recv(self, timeout: float = 10) -> dict[str, Any]:
        return json.loads(self.ws.recv(timeout=timeout))  # type: ignore[no-any-return]

    def ask(self, message: dict[str, Any] | str) -> dict[str, Any]:
        self.send(message)
        return self.recv()

    def close(self) -> None:
        self._cm.__exit__(None, None, None)

    def __enter__(self) -> Raw:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


REPO = HERE.parents[1]


class ServeProcess:
    """``gymforge serve ... --port 0`` in a subprocess; the port is read from its banner.
    Startup is bounded; ``stop`` terminates it (then kills it)."""

    def __init__(self, *args: str, timeout: float = 30.0) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(
            os.pathsep
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gymforge.cli", "serve", *args, "--port", "0"],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.port = self._read_port(timeout)
        self.url = f"ws://127.0.0.1:{self.port}"

    def _read_port(self, timeout: float) -> int:
        found: list[int] = []
        lines: list[str] = []

        def read() -> None:
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                lines.append(line)
                match = re.search(r"ws://127\.0\.0\.1:(\d+)/ws", line)
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

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
