"""Helpers of the server attacks: the raw protocol client of ``tests/serve`` and a socket
connected from another loopback address (a second client on the same machine)."""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "serve"))

from serve_helpers import TOKEN, Raw, ServeProcess

from gymforge.serve.launch import ServerThread

__all__ = ["TOKEN", "Raw", "ServeProcess", "from_address"]


def from_address(server: ServerThread, address: str, **kw: Any) -> Raw:
    """A ``Raw`` session whose TCP connection comes from ``address`` (e.g. 127.0.0.2:
    Linux routes all of 127/8 to loopback), so the server sees another client."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.bind((address, 0))
    sock.connect((server.host, server.port))
    return Raw(server, sock=sock, **kw)
