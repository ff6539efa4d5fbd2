"""Helpers of the server tests: refs to the test environments and a raw protocol client."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

from gymforge.serve.launch import ServerThread
from gymforge.testing import served

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


def ServeProcess(*args: str, timeout: float = served.STARTUP_TIMEOUT_S) -> served.ServeProcess:
    """``gymforge serve ARGS`` from this checkout (``gymforge.testing.served``)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return served.ServeProcess(*args, timeout=timeout, env=env, cwd=REPO)
