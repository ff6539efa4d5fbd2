"""A real worker process for the ``prefork`` tests, standard library only (like the sandbox's
zygote, it loads ``wire.py`` by path). ``argv[1]`` picks how it starts: ``ok`` (a ready frame),
``noready`` (exits at once), ``badready`` (a wrong first frame). Ops: ``echo`` (the header back,
blobs reversed), ``sleep`` (``seconds``), ``garbage`` (bytes that are no frame), ``die`` (exit
mid-request), ``chatter`` (answer, then one unsolicited frame)."""

from __future__ import annotations

import importlib.util
import os
import sys
import time

sys.path.insert(0, os.path.dirname(sys.argv[2]))  # wire's siblings (stdvalues), as in the jail
_spec = importlib.util.spec_from_file_location("wire", sys.argv[2])
assert _spec is not None and _spec.loader is not None
wire = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(wire)


def main(mode: str) -> None:
    if mode == "noready":
        return
    first = {"ev": "ready", "pid": os.getpid()} if mode == "ok" else {"ev": "hello"}
    wire.write_all(1, wire.pack_frame(first))
    stream = wire.FrameStream(0)
    while True:
        try:
            hdr, blobs = stream.recv()
        except wire.FrameError:
            return
        op = hdr.get("op")
        if op == "sleep":
            time.sleep(float(hdr["seconds"]))
        elif op == "garbage":
            wire.write_all(1, b"\x00\x00\x00\x02{x")
            continue
        elif op == "die":
            os._exit(3)
        out = wire.pack_frame(dict(hdr, pid=os.getpid()), blobs[::-1])
        if op == "chatter":  # one write (atomic on a pipe): the host reads both at once
            out += wire.pack_frame({"ev": "unsolicited"})
        wire.write_all(1, out)


if __name__ == "__main__":
    main(sys.argv[1])
