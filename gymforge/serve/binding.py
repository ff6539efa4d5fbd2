"""Binding a listening address, for every server gymforge starts (``serve``, ``serve --mcp``,
``proxy``, ``view``): a port that is busy, out of range or not allowed is one ``UserError``
worded the same everywhere (``cannot bind HOST:PORT: reason``), never a traceback. Kept free
of the ``[serve]`` extra's imports so that ``gymforge view`` can use it without them."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager

from gymforge.core.errors import UserError

PORT_RANGE = (0, 65535)
"""The ports a ``--port`` may name (0: a free one the system picks)."""


def bind_error(host: str, port: int, err: OSError | OverflowError) -> UserError:
    """The one-line error of a failed bind of ``host:port``."""
    # the system's words, however the server library wrapped them
    reason = os.strerror(err.errno) if isinstance(err, OSError) and err.errno else str(err)
    return UserError(f"cannot bind {host}:{port}: {reason}")


@contextmanager
def binding(host: str, port: int) -> Iterator[None]:
    """Turn a failed bind inside the block into ``bind_error``'s ``UserError``."""
    low, high = PORT_RANGE
    if not low <= port <= high:
        raise UserError(f"cannot bind {host}:{port}: a port is {low} to {high}")
    try:
        yield
    except (OSError, OverflowError) as err:
        raise bind_error(host, port, err) from err


def bind(host: str, port: int) -> socket.socket:
    """A bound (not yet listening) TCP socket; UserError when the address is unavailable."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY on accepted sockets only when the
    # listening socket says TCP (with proto 0, every reply waits ~40 ms on delayed ACKs)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        with binding(host, port):
            sock.bind((host.strip("[]"), port))
    except UserError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock
