"""The session route's own WebSocket transport (``gymforge.serve.ws_fast``), frame by frame.

Raw sockets speak RFC 6455 to a running server: fragmented messages, control frames
between fragments, protocol errors and their close codes, the frame-size cap, an abrupt
disconnect, and a client that sends without reading (memory stays bounded).
"""

from __future__ import annotations

import base64
import json
import os
import socket
import struct
import time
from collections.abc import Callable

import pytest
from serve_envs import CountingEnv
from serve_helpers import Raw, env_ref

from gymforge.envs.ledger import LedgerEnv
from gymforge.serve.launch import ServerThread
from gymforge.serve.ws_fast import INBOX_MESSAGES, SessionProtocol

Start = Callable[..., ServerThread]
TASK = LedgerEnv.tasks.sample(1, 0, "train")[0]


def wait_for(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.02)


def frame(opcode: int, payload: bytes, fin: bool = True, mask: bool = True, rsv: int = 0) -> bytes:
    """One client frame; ``mask=False`` breaks RFC 6455's rule for clients."""
    n = len(payload)
    head = bytes([(0x80 if fin else 0) | rsv << 4 | opcode])
    bit = 0x80 if mask else 0
    if n < 126:
        head += bytes([bit | n])
    elif n < 65536:
        head += bytes([bit | 126]) + struct.pack("!H", n)
    else:
        head += bytes([bit | 127]) + struct.pack("!Q", n)
    if not mask:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


class Wire:
    """A raw socket that did the opening handshake and reads whole server frames."""

    def __init__(self, server: ServerThread, path: str = "/ws", hello: bool = True) -> None:
        self.sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (
                f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            chunk = self.sock.recv(4096)
            assert chunk, "closed during the handshake"
            self.buf += chunk
        self.head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        if hello and b" 101 " in self.head:
            assert self.message()["type"] == "hello"

    def _read(self, n: int) -> bytes:
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def frame(self) -> tuple[int, bytes]:
        b0, b1 = self._read(2)
        assert not b1 & 0x80, "a server frame must not be masked"
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack("!H", self._read(2))[0]
        elif n == 127:
            n = struct.unpack("!Q", self._read(8))[0]
        return b0 & 0x0F, self._read(n)

    def message(self) -> dict[str, object]:
        opcode, payload = self.frame()
        assert opcode == 0x1, (opcode, payload)
        return json.loads(payload)  # type: ignore[no-any-return]

    def close_code(self) -> int:
        """The code of the server's close frame (data frames before it are skipped)."""
        while True:
            opcode, payload = self.frame()
            if opcode == 0x8:
                return int(struct.unpack("!H", payload[:2])[0])

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def ask(self, message: dict[str, object]) -> dict[str, object]:
        self.send(frame(0x1, json.dumps(message).encode()))
        return self.message()

    def close(self) -> None:
        self.sock.close()


def test_the_session_route_is_served_by_the_fast_transport(start: Start) -> None:
    """Not a vacuous suite: /ws connections are ws_fast's protocol on its direct path."""
    server = start()
    wire = Wire(server)
    try:
        conns = [
            c for c in server._server.server_state.connections if isinstance(c, SessionProtocol)
        ]
        assert len(conns) == 1 and conns[0].fast
        assert wire.ask({"type": "ping", "id": 7}) == {"type": "pong", "id": 7}
    finally:
        wire.close()


def test_fragmented_message_with_a_ping_between_fragments(start: Start) -> None:
    server = start()
    wire = Wire(server)
    try:
        text = json.dumps({"type": "reset", "task_id": TASK, "seed": 0, "id": "frag"}).encode()
        wire.send(frame(0x1, text[:10], fin=False))
        wire.send(frame(0x9, b"are you there"))  # control frames may interleave
        wire.send(frame(0x0, text[10:30], fin=False))
        wire.send(frame(0x0, text[30:]))
        assert wire.frame() == (0xA, b"are you there")  # pong, same payload
        reply = wire.message()
        assert reply["type"] == "reset_result" and reply["id"] == "frag"
    finally:
        wire.close()


def test_binary_messages_are_messages_too(start: Start) -> None:
    server = start()
    wire = Wire(server)
    try:
        wire.send(frame(0x2, json.dumps({"type": "ping", "id": 1}).encode()))
        assert wire.message() == {"type": "pong", "id": 1}
    finally:
        wire.close()


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (frame(0x1, b'{"type":"ping"}', mask=False), 1002),  # a client frame must be masked
        (frame(0x1, b'{"type":"ping"}', rsv=4), 1002),  # RSV1 without an extension
        (frame(0x3, b"x"), 1002),  # a reserved opcode
        (frame(0x0, b"x"), 1002),  # a continuation with nothing to continue
        (frame(0x9, b"x" * 126), 1002),  # a control frame over 125 bytes
        (frame(0x1, b'{"type": "\xff"}'), 1007),  # a text frame that is not UTF-8
    ],
    ids=["unmasked", "rsv1", "opcode", "continuation", "long-ping", "not-utf8"],
)
def test_protocol_errors_close_with_their_code_and_free_the_session(
    start: Start, data: bytes, code: int
) -> None:
    server = start(env_ref("CountingEnv"))
    before = CountingEnv.live()
    wire = Wire(server)
    try:
        wait_for(lambda: server.hub.metrics.sessions_open == 1)
        wire.send(data)
        assert wire.close_code() == code
        wait_for(lambda: server.hub.metrics.sessions_open == 0 and CountingEnv.live() == before)
    finally:
        wire.close()


def test_a_frame_declared_beyond_the_transport_cap_is_refused_unread(start: Start) -> None:
    """The header alone (a 64-bit length past 4x max_message_bytes) ends the session with
    1009: the server does not wait for, nor buffer, the payload."""
    server = start(max_message_bytes=1024)
    wire = Wire(server)
    try:
        head = bytes([0x81, 0x80 | 127]) + struct.pack("!Q", 2**40) + os.urandom(4)
        wire.send(head + b"x" * 100)
        assert wire.close_code() == 1009
    finally:
        wire.close()


def test_fragments_adding_up_past_the_cap_are_refused(start: Start) -> None:
    server = start(max_message_bytes=1024)
    wire = Wire(server)
    try:
        for i in range(5):  # 5 x 1,000 bytes > the 4,096-byte transport cap
            wire.send(frame(0x1 if i == 0 else 0x0, b" " * 1000, fin=False))
        assert wire.close_code() == 1009
    finally:
        wire.close()


def test_close_handshake_is_echoed_and_frees_the_session(start: Start) -> None:
    server = start(env_ref("CountingEnv"))
    before = CountingEnv.live()
    wire = Wire(server)
    try:
        wire.ask({"type": "reset", "task_id": TASK, "seed": 0})
        wire.send(frame(0x8, struct.pack("!H", 1000) + b"bye"))
        assert wire.close_code() == 1000
        wait_for(lambda: server.hub.metrics.sessions_open == 0 and CountingEnv.live() == before)
    finally:
        wire.close()


def test_an_abrupt_disconnect_frees_the_session(start: Start) -> None:
    """A reset connection (RST, no close frame) mid-episode releases its slot and env."""
    server = start(env_ref("CountingEnv"), max_sessions=1)
    before = CountingEnv.live()
    wire = Wire(server)
    wire.ask({"type": "reset", "task_id": TASK, "seed": 0})
    assert CountingEnv.live() == before + 1
    wire.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    wire.close()  # SO_LINGER 0: the kernel sends RST
    wait_for(lambda: server.hub.metrics.sessions_open == 0 and CountingEnv.live() == before)
    with Raw(server, token=None) as raw:  # the only slot is free again
        assert raw.ask({"type": "ping"})["type"] == "pong"


def test_other_paths_keep_uvicorns_route(start: Start) -> None:
    """A WebSocket request to a path with no WebSocket route is refused (403) as before."""
    server = start()
    wire = Wire(server, path="/metrics", hello=False)
    try:
        assert wire.head.split(b"\r\n")[0].split()[1] == b"403"
    finally:
        wire.close()


def test_a_client_that_sends_without_reading_holds_bounded_memory(start: Start) -> None:
    """Half-megabyte replies the client never reads: the transport's buffer stops the
    session's writes, the session stops reading (its inbox past INBOX_MESSAGES), and the
    kernel's socket buffers push back on the client."""
    server = start(env_ref("BigStateEnv"), send_timeout=60)
    wire = Wire(server)
    try:
        wire.ask({"type": "reset", "task_id": TASK, "seed": 0})
        request = frame(0x1, json.dumps({"type": "snapshot"}).encode())
        wire.sock.settimeout(0.5)
        sent = 0
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # until the client's sends block
            try:
                wire.sock.sendall(request)
            except TimeoutError:
                break
            sent += 1
        else:
            pytest.fail("the server kept reading requests whose replies nobody read")
        conns = [
            c for c in server._server.server_state.connections if isinstance(c, SessionProtocol)
        ]
        assert len(conns) == 1
        proto = conns[0]
        wait_for(lambda: proto.read_paused)
        # reading stopped: what waits is at most one socket read's frames (asyncio and
        # uvloop read 256 KiB at a time), as under uvicorn's own protocol, and stays put
        waiting = proto.queue.qsize()
        # (the session may have taken some off the inbox after reading paused, before its
        # writes blocked: the bound is what waits at most, not at least)
        assert 0 < waiting <= 2**18 // len(request) + INBOX_MESSAGES
        time.sleep(0.3)
        assert proto.queue.qsize() == waiting and proto.read_paused
        high = proto.transport.get_write_buffer_limits()[1]
        assert proto.transport.get_write_buffer_size() <= high + 2**20  # one reply past it
        assert server.hub.metrics.messages < sent  # many requests still wait in the kernel
    finally:
        wire.close()


def test_a_trusted_proxys_forwarded_address_is_the_client_as_under_asgi(start: Start) -> None:
    """uvicorn's proxy-header rule (X-Forwarded-For from a trusted address, loopback by
    default) names the client for the per-client cap on this route too."""
    server = start(max_sessions=4, max_sessions_per_client=1)
    first = Raw(server, token=None, headers={"X-Forwarded-For": "203.0.113.1"})
    second = Raw(server, token=None, headers={"X-Forwarded-For": "203.0.113.2"})
    try:
        assert first.hello["type"] == second.hello["type"] == "hello"
        with Raw(server, token=None, headers={"X-Forwarded-For": "203.0.113.1"}) as third:
            assert third.hello["type"] == "error" and third.hello["code"] == "capacity"
    finally:
        first.close()
        second.close()
