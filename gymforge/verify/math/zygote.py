"""The host's handle on the math verifier's zygote (its own side is ``worker.zygote_main``)."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from gymforge.core.errors import InfraError
from gymforge.sandbox import wire
from gymforge.settings import inherited_environ

_ZYGOTE_CODE = (
    "import sys; from gymforge.verify.math.worker import zygote_main; zygote_main(int(sys.argv[1]))"
)


class Zygote:
    """The host's handle on the zygote: its process and its ``SOCK_SEQPACKET`` control socket
    (``spawn`` a worker on a socket of ours, ``reap`` a killed one, ``close``). Each datagram
    is one ``wire`` frame, the framing of every worker channel; a spawn passes the worker's
    socket along as ``SCM_RIGHTS``."""

    def __init__(self, start_timeout_s: float = 120.0) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        root = str(Path(__file__).resolve().parents[3])
        env = inherited_environ()  # this gymforge first; ``-P``: not one in the working directory
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen(
            [sys.executable, "-P", "-c", _ZYGOTE_CODE, str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            start_new_session=True,
            env=env,
        )
        theirs.close()
        self.sock = ours
        self.lock = threading.Lock()
        ours.settimeout(start_timeout_s)
        try:
            hello = ours.recv(4096)
        except OSError as e:
            self.close()
            raise InfraError(f"math verifier zygote did not start: {e}") from e
        if not hello:
            self.close()
            raise InfraError("math verifier zygote exited at start-up (see its stderr)")
        ours.settimeout(5.0)  # a zygote that takes longer to answer is replaced
        try:
            self.pid = int(wire.unpack_frame(hello)[0]["pid"])
        except (wire.FrameError, KeyError, ValueError, TypeError) as e:
            self.close()
            raise InfraError(f"math verifier zygote: bad ready frame ({e})") from None

    def _call(self, req: dict[str, Any], fds: tuple[int, ...] = ()) -> dict[str, Any]:
        with self.lock:
            data = wire.pack_frame(req)
            if fds:
                socket.send_fds(self.sock, [data], list(fds))
            else:
                self.sock.send(data)
            reply = self.sock.recv(4096)
        if not reply:
            raise OSError("zygote closed its control socket")
        try:
            return wire.unpack_frame(reply)[0]
        except wire.FrameError as e:
            raise OSError(f"bad reply from the zygote: {e}") from None

    def spawn(self, hooks: bool, memory_mb: int) -> tuple[int, socket.socket]:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            reply = self._call(
                {"cmd": "spawn", "hooks": hooks, "memory_mb": memory_mb}, (theirs.fileno(),)
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        return int(reply["pid"]), ours

    def reap(self, pid: int) -> None:
        with contextlib.suppress(OSError):  # the zygote is gone; its workers died with it
            self._call({"cmd": "reap", "pid": pid})

    def close(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self._call({"cmd": "exit"})
        self.sock.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
