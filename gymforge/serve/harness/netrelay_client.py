"""gymforge-net: the inside half of a workspace harness's network relay.

    gymforge-net PORT=SOCKET [PORT=SOCKET ...] -- COMMAND [ARG ...]

Listens on 127.0.0.1:PORT for each pair and forwards each connection to the unix socket
SOCKET (the runner forwards it on to the endpoint), then runs COMMAND and exits with its
exit code. Standard library only: copied, as is, into each workspace harness's episode
directory.
"""

import asyncio
import contextlib
import sys
from collections.abc import Awaitable, Callable

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]

CHUNK = 1 << 16


async def pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            data = await reader.read(CHUNK)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


def forwarder(socket_path: str) -> Handler:
    async def connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_unix_connection(socket_path)
        except OSError:
            writer.close()
            return
        await asyncio.gather(pump(reader, up_writer), pump(up_reader, writer))

    return connect


async def main(argv: list[str]) -> int:
    split = argv.index("--")
    pairs, command = argv[:split], argv[split + 1 :]
    servers = []
    for pair in pairs:
        port, _, path = pair.partition("=")
        servers.append(await asyncio.start_server(forwarder(path), "127.0.0.1", int(port)))
    process = await asyncio.create_subprocess_exec(*command)
    code = await process.wait()
    for server in servers:
        server.close()
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
