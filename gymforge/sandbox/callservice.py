"""The function-call service as the zygote runs it (in the sandbox; standard library only).

A ``Session`` holds one candidate loaded in a job child and answers calls through it. A reply (a
plain-JSON blob the zygote never decodes) is accepted only if it answers the next call the
child owes, once. Interactive calls are forwarded one by one on the child's command pipe; in
batch mode the child gets every call with the job and streams its answers, which halves the
hops per call. A call that times out, crashes the child, floods output or forges control
frames kills the child; the next call re-forks and reloads the candidate (``restarts``) unless
``respawn`` is off; after a timeout, no further call runs when ``stop_on_timeout`` is on (a
judge that stops at the first timeout asks for that in batch mode too). ``wall`` bounds the
time spent loading and calling, so a job never outlives ``Limits.wall_time`` by much.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

# The sandbox runs these files with their own directory on sys.path (sibling imports by
# bare name); the type checker sees the same files as modules of this package.
if TYPE_CHECKING:
    from gymforge.sandbox import jobdir, wire
    from gymforge.sandbox.jobproc import JobProc, Sink
else:
    import jobdir
    import wire
    from jobproc import JobProc, Sink


class Session:
    """Function-call state for one job (see the module docstring). ``z`` is the zygote."""

    def __init__(self, z: Any, hdr: dict[str, Any], blobs: list[bytes]) -> None:
        self.z, self.hdr, self.blobs = z, hdr, blobs
        self.sink = Sink(int(hdr["output_bytes"]))
        self.wall = float(hdr["wall"])
        self.load_timeout = float(hdr.get("call_timeout", self.wall))
        self.proc: JobProc | None = None
        self.busy = 0.0
        self.restarts = 0
        self.cpu = 0.0
        self.rss = 0
        self.strays = 0
        self.load: dict[str, Any] | None = None
        self.events: dict[Any, tuple[dict[str, Any], list[bytes]]] = {}
        self.expect: list[Any] = []  # call ids the current child owes answers for, in order
        self.last: dict[str, Any] = {}
        self.timed_out = False

    def on_ctl(self, proc: JobProc, hdr: dict[str, Any], blobs: list[bytes]) -> None:
        ev = hdr.get("ev")
        if ev == "loaded" and "loaded" not in self.events:
            self.events["loaded"] = (hdr, blobs)
        elif ev == "result" and self.expect and hdr.get("id") == self.expect[0]:
            self.events[self.expect.pop(0)] = (hdr, blobs)
        else:
            proc.violation = f"unexpected control frame {ev!r}"
            proc.kill("protocol")

    def start(self, batch: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """Load the candidate; a ``batch`` of calls goes to the child with the job."""
        try:
            jobdir.write_files(self.z.jobdir, self.hdr, self.blobs)
        except Exception as e:
            self.load = {"ok": False, "setup_error": f"{type(e).__name__}: {e}"}
            return self.load
        self.load = self.spawn(time.monotonic() + min(self.load_timeout, self.wall), batch)
        return self.load

    def spawn(self, deadline: float, batch: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        self.events.pop("loaded", None)
        self.expect = [c["id"] for c in batch or []]
        t = time.monotonic()
        p = self.proc = self.z.new_proc(self.hdr, self.blobs, self.sink, self.on_ctl, batch)
        r = p.pump(deadline, stop=lambda: "loaded" in self.events)
        if r == "exit":
            p.pump(time.monotonic() + 0.05, stop=lambda: "loaded" in self.events)
        self.busy += time.monotonic() - t
        if "loaded" in self.events:
            hdr = self.events["loaded"][0]
            return {**wire.flat(hdr, ("etype", "msg")), "ok": hdr.get("ok") is True}
        if r == "deadline":
            p.kill("load_timeout")
        self.retire()
        return {"ok": False, "setup_error": p.setup_error, **p.facts()}

    def retire(self) -> None:
        p = self.proc
        if p is None:
            return
        self.strays += p.finish(self.z.kill_rest)
        ru = p.rusage
        if ru is not None:
            self.cpu += ru.ru_utime + ru.ru_stime
            self.rss = max(self.rss, ru.ru_maxrss * 1024)
        self.last = p.facts()
        self.proc = None

    def call(
        self, msg: dict[str, Any], args: bytes, batch: list[dict[str, Any]] | None = None
    ) -> tuple[dict[str, Any], list[bytes]]:
        """Answer one call. In batch mode (``batch`` = this call and the ones after it) the
        child already has the call, or gets the rest of the batch when it is respawned; the
        call's timeout runs from the moment the zygote starts waiting for its answer."""
        cid, name = msg.get("id"), str(msg.get("name"))
        out: dict[str, Any] = {"ev": "result", "id": cid, "name": name}
        timeout = min(float(msg.get("timeout") or self.load_timeout), self.wall - self.busy)
        if not (self.load or {}).get("ok"):
            return {**out, "status": "not_run", "msg": "the candidate did not load"}, []
        if timeout <= 0:
            return {**out, "status": "not_run", "msg": "session wall time exhausted"}, []
        if self.timed_out and self.hdr.get("stop_on_timeout"):
            return {**out, "status": "not_run", "msg": "an earlier call timed out"}, []
        t = time.monotonic()
        deadline = t + timeout
        if cid in self.events:  # a batch child ran ahead and has already answered
            return self._answer(out, cid, t)
        p = self.proc
        if p is not None and (p.exited or p.kill_reason) and cid in self.expect:
            return self._failed(out, "exit", t)  # a batch child died in this very call
        if p is None or p.exited or p.kill_reason:
            self.retire()
            if not self.hdr.get("respawn", True):
                return {**out, "status": "not_run", "msg": "the candidate process died"}, []
            self.restarts += 1
            load = self.spawn(deadline, batch)
            t = time.monotonic()
            if not load["ok"]:
                return {**out, "status": "not_run", "msg": "reload failed", "load": load}, []
            p = self.proc
            out["restarted"] = True
        assert p is not None
        if batch is None:
            self.expect.append(cid)
            extra = {k: msg[k] for k in ("form", "keep", "target") if msg.get(k) is not None}
            p.send_cmd({"op": "call", "id": cid, "name": name, **extra}, [args])
        r = p.pump(deadline, stop=lambda: cid in self.events)
        if r == "exit":
            p.pump(time.monotonic() + 0.05, stop=lambda: cid in self.events)
        if cid in self.events:
            return self._answer(out, cid, t)
        return self._failed(out, r, t)

    def _failed(
        self, out: dict[str, Any], why: str, t: float
    ) -> tuple[dict[str, Any], list[bytes]]:
        """The call got no answer: a timeout, or the child died. Later calls go to a new one."""
        self.busy += time.monotonic() - t
        out["wall_time"] = round(time.monotonic() - t, 6)
        self.expect = []
        p = self.proc
        if why == "deadline" and p is not None:
            p.kill("call_timeout")
            self.timed_out = True
            return {**out, "status": "timeout"}, []
        self.retire()
        status = {"output": "output_limit", "protocol": "protocol_error"}.get(
            str(self.last.get("kill_reason")), "crashed"
        )
        crash = {k: self.last.get(k) for k in ("exit_code", "signal", "exception")}
        if self.last.get("violation"):
            crash["msg"] = self.last["violation"]
        return {**out, "status": status, **crash}, []

    def _answer(
        self, out: dict[str, Any], cid: Any, t: float
    ) -> tuple[dict[str, Any], list[bytes]]:
        self.busy += time.monotonic() - t
        out["wall_time"] = round(time.monotonic() - t, 6)
        hdr, vblobs = self.events.pop(cid)
        keep = wire.flat(hdr, ("status", "etype", "msg", "handle", "type"))
        return {**out, **keep}, vblobs[:1] if keep.get("status") == "ok" else []

    def end(self) -> tuple[dict[str, Any], list[bytes]]:
        p = self.proc
        if p is not None and not p.exited and not p.kill_reason:
            p._close("cmd")
            p.pump(time.monotonic() + 1.0)
        self.retire()
        facts = dict(self.last)
        facts.update(
            ev="done",
            wall_time=round(self.busy, 6),
            cpu_time=round(self.cpu, 6),
            max_rss_bytes=self.rss,
            load=self.load,
            restarts=self.restarts,
            strays=self.strays,
            truncated=sorted(self.sink.truncated),
            clean=self.z.cleanup(),
        )
        return facts, [bytes(self.sink.buf["stdout"]), bytes(self.sink.buf["stderr"])]
