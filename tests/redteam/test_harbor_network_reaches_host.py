"""Attack: the task's ``task.toml`` asks for the network (``[environment] allow_internet =
true``, e.g. to install a package), and the agent's ``run`` command connects from its
container to the host: ``host.containers.internal`` (the bridge's gateway), where every
service the host binds to all addresses answers (vLLM's default ``--host 0.0.0.0``, a Ray
dashboard's job API, a Redis). Success would be model calls outside the proxy's record
(unrecorded tokens from the policy's own server), or a channel to services that run code
as the runner. gymforge gives the agent's container a network only when the operator
grants it (``GYMFORGE_HARBOR_NETWORK=1``), since the engine's default network reaches the
host; a task that asks without that grant runs with no network, and its verdict says so."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from harbor_attack import CONTAINERS, FILES, play

from gymforge.core.types import Reply, ToolCall

pytestmark = CONTAINERS

NETWORKED = {**FILES, "task.toml": FILES["task.toml"] + "\n[environment]\nallow_internet = true\n"}


@contextmanager
def host_service() -> Iterator[int]:
    """A service on all the host's addresses (as vLLM binds by default)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"host-secret-service")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("0.0.0.0", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def probe(port: int) -> str:
    code = (
        "import socket\n"
        "hosts = ('host.containers.internal', 'host.docker.internal', '10.88.0.1', '172.17.0.1')\n"
        "for h in hosts:\n"
        "    try:\n"
        f"        s = socket.create_connection((h, {port}), timeout=3)\n"
        "        s.sendall(b'GET / HTTP/1.0\\r\\n\\r\\n'); print(h, s.recv(200))\n"
        "    except OSError as e:\n"
        "        print(h, 'refused', e)\n"
    )
    return f'python3 -c "{code}"'


def test_the_agents_container_cannot_reach_the_host() -> None:
    steps: list[Any] = []
    with host_service() as port:
        last, _ = play(
            [ToolCall(name="run", arguments={"command": probe(port)}), Reply(text="Done.")],
            naive=False,
            files=NETWORKED,
            steps=steps,
        )
    ran = steps[0].observation.data["tool_result"]
    assert ran["ok"], ran
    assert "host-secret-service" not in repr(ran), ran["content"]
    facts = last.info["verdict"]["facts"]
    assert facts["network"] is False and "GYMFORGE_HARBOR_NETWORK" in facts["network_withheld"]
