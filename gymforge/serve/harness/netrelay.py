"""A workspace harness's network: its own namespace, with its episode endpoints only.

A workspace harness runs with ``share_net=False`` (bubblewrap ``--unshare-net``): its
network namespace has a loopback interface and nothing else, so no host service, no
inference server and no outside address is reachable. Its two endpoints (the proxy and the
shell endpoint, both ``http://127.0.0.1:PORT/...``) are brought in through unix sockets:

- on the runner's side, :class:`EpisodeRelay` listens on ``EPISODE/net/PORT.sock`` for each
  endpoint port and forwards each connection to ``127.0.0.1:PORT`` on the host;
- inside, :data:`CLIENT` (``gymforge-net``, standard library only, copied into the episode
  directory) listens on ``127.0.0.1:PORT`` for each port, forwards each connection to its
  socket, and runs the harness's command, exiting with its exit code.

So the harness's URLs are the same as on the host and any HTTP client works unmodified,
while the only places it can connect to are its own two endpoints (each of which still
wants the episode's token). Each relayed connection holds three of the runner's file
descriptors, so an episode's relay holds at most :data:`MAX_CONNECTIONS` at once and closes
any more as they come (a harness cannot run the runner, and its other episodes, out of
files).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable
from pathlib import Path

from gymforge.serve.harness.confine import EPISODE_DIR

CLIENT = Path(__file__).with_name("netrelay_client.py")
CLIENT_NAME = "gymforge-net"
CHUNK = 1 << 16
MAX_CONNECTIONS = 64
"""Connections one episode's relay holds open at once; more are closed as they come."""


class EpisodeRelay:
    """The runner's side of one episode's relay (module docstring)."""

    def __init__(self, episode_dir: Path, ports: tuple[int, ...], uid: int | None = None) -> None:
        self.dir = episode_dir / "net"
        self.ports = tuple(sorted(set(ports)))
        self.uid = uid
        self.servers: list[asyncio.AbstractServer] = []
        self.pumps: set[asyncio.Task[None]] = set()
        self.open = 0  # connections being relayed (at most MAX_CONNECTIONS)

    async def start(self) -> EpisodeRelay:
        self.dir.mkdir(mode=0o755, exist_ok=True)
        for port in self.ports:
            path = self.dir / f"{port}.sock"
            server = await asyncio.start_unix_server(self._handler(port), path=str(path))
            os.chmod(path, 0o777)  # the harness's uid connects; the directory is the episode's
            self.servers.append(server)
        return self

    def command(self, argv: list[str], python: str) -> list[str]:
        """``argv`` run behind the inside half of the relay."""
        inside = [f"{port}={EPISODE_DIR}/net/{port}.sock" for port in self.ports]
        return [python, f"{EPISODE_DIR}/bin/{CLIENT_NAME}", *inside, "--", *argv]

    def _handler(
        self, port: int
    ) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]:
        async def connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await self._connect(reader, writer, port)

        return connect

    async def _connect(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, port: int
    ) -> None:
        if self.open >= MAX_CONNECTIONS:  # each costs the runner three descriptors
            writer.close()
            return
        self.open += 1
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            self.open -= 1
            writer.close()
            return
        pumps = [
            asyncio.get_running_loop().create_task(_pump(a, b))
            for a, b in ((reader, up_writer), (up_reader, writer))
        ]
        self.pumps.update(pumps)
        for task in pumps:
            task.add_done_callback(self.pumps.discard)
        done = asyncio.gather(*pumps, return_exceptions=True)
        done.add_done_callback(lambda _: self._closed(writer, up_writer))

    def _closed(self, *writers: asyncio.StreamWriter) -> None:
        """Both directions of a connection ended: close both ends, free its slot."""
        self.open -= 1
        for w in writers:
            with contextlib.suppress(Exception):
                w.close()

    async def stop(self) -> None:
        for server in self.servers:
            server.close()
        for task in list(self.pumps):
            task.cancel()
        for server in self.servers:
            with contextlib.suppress(Exception):
                await server.wait_closed()
        self.servers.clear()


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
    except (OSError, asyncio.IncompleteReadError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


def install_client(episode_dir: Path, python: str) -> None:
    """Write ``gymforge-net`` into ``episode_dir/bin`` (made by the shell client's install)."""
    target = episode_dir / "bin" / CLIENT_NAME
    target.write_text(f"#!{python}\n" + CLIENT.read_text())
    target.chmod(0o755)
