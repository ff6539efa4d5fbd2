"""The zygote: a long-lived Python process inside one worker's sandbox that runs one child per
job. Started as ``python3 -I -S zygote.py '<config json>'``; standard library only.

It reads frames (see ``wire``) on fd 0 and answers on fd 1; nothing else ever writes there.
Untrusted code never runs here: it runs only in job children, after ``child.setup``, which the
fork template (``template.py``) forks: no job inherits this process's memory, which holds every
job's data (the zygote relays it), nor any other job's. Inside
bubblewrap the zygote is pid 1 of the worker's pid namespace (``--as-pid-1``), so jobs cannot
signal it (the kernel drops signals to a namespace's init that it has no handler for) and are
re-parented to it; it is non-dumpable, so jobs cannot ptrace it. After every job it SIGKILLs
every other process in the namespace but the template until ``/proc`` shows none, reaps them,
wipes the job directory, and removes System V IPC objects: nothing of a job survives it
(``zygote_cleanup.py``).

Ops (header ``op``): ``run`` (a program: Python in-process or ``execve``), ``calls`` (function-
call service, batch), ``session`` + ``call``* + ``end`` (the same, interactive), ``ping``,
``exit``. Replies carry raw facts; the host classifies.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from typing import TYPE_CHECKING, Any

# Run as a script: its siblings are imported by bare name from its own directory; the type
# checker sees the same files as modules of this package.
if TYPE_CHECKING:
    from gymforge.sandbox import jail, jobdir, wire
    from gymforge.sandbox.callservice import Session
    from gymforge.sandbox.jobproc import JobProc, Sink
    from gymforge.sandbox.landlock import SCRATCH
    from gymforge.sandbox.template import ForkTemplate, TemplateDown
    from gymforge.sandbox.zygote_cleanup import JobCleanup
else:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import jail
    import jobdir
    import wire
    from callservice import Session
    from jobproc import JobProc, Sink
    from landlock import SCRATCH
    from template import ForkTemplate, TemplateDown
    from zygote_cleanup import JobCleanup

    del sys.path[0]

# Modules judged code imports most, pre-imported by the fork template (``template.py``), the
# process every job is forked from. Each pre-import makes every fork dearer (more page tables,
# more copy-on-write faults), so the list is short; ``random`` is left out on purpose (a forked
# copy would share the template's state: children import it fresh, or the child seeds it).
PREIMPORT = [
    "bisect",
    "collections",
    "functools",
    "heapq",
    "itertools",
    "math",
    "re",
    "string",
    "typing",
]
CTL_OVERHEAD = 1 << 16
CTL_BUDGET = 4 << 20  # control bytes a program job may send in all
MAX_EVENTS = 10000
MAX_IPC_OBJECTS = 256  # System V IPC objects a job may hold (the kernel allows ~68k)


class Zygote(JobCleanup):
    def __init__(self, cfg: dict[str, Any]) -> None:
        self.jobdir: str = cfg["jobdir"]
        self.pid1 = os.getpid() == 1
        self.own_ipc = bool(cfg.get("own_ipc", self.pid1))
        self.stdlib_path = [p for p in sys.path if p]
        self.job_sids: set[int] = set()
        self.seccomp = "off"
        self.warm: JobProc | None = None
        self.sabotage: str | None = None  # what the job now running did to the fork template
        self.template = ForkTemplate(
            {
                "jobdir": self.jobdir,
                "preimport": PREIMPORT + list(cfg.get("preimport", [])),
                "preimport_path": list(cfg.get("preimport_path", [])),
            }
        )
        self.host = wire.FrameStream(0)
        # A job directory that is its own filesystem (a tmpfs) counts its inodes exactly.
        parent = os.path.dirname(self.jobdir.rstrip("/")) or "/"
        self.own_fs = os.stat(self.jobdir).st_dev != os.stat(parent).st_dev

    # ------------------------------------------------------------------ main loop
    def serve(self) -> None:
        self.reply(
            {
                "ev": "ready",
                "pid": os.getpid(),
                "uid": os.getuid(),
                "pid1": self.pid1,
                "python": sys.version.split()[0],
                "seccomp": self.seccomp,
                "template": self.template.pid,
            }
        )
        while True:
            try:
                hdr, blobs = self.host.recv()
            except (wire.FrameError, OSError):
                return
            op = hdr.get("op")
            self.sabotage = None
            if op == "exit":
                self.retire_warm()
                self.template.stop()
                return
            if op in ("run", "calls", "session"):
                self.retire_warm_if_dead()
            if op == "ping":
                self.reply({"ev": "pong", "clean": self.cleanup()})
            elif op == "run":
                self.reply(*self.op_run(hdr, blobs))
            elif op in ("calls", "session"):
                self.op_session(hdr, blobs)
            else:
                self.reply({"ev": "error", "msg": f"unknown op {op!r}"})
            if not self.heal():
                return  # no template, no jobs: the host respawns this worker
            self.prefork()

    def reply(self, header: dict[str, Any], blobs: list[bytes] | tuple[bytes, ...] = ()) -> None:
        wire.write_all(1, wire.pack_frame(header, blobs))

    # ------------------------------------------------------------------ job set-up
    def child_job(self, hdr: dict[str, Any]) -> dict[str, Any]:
        env = dict(hdr.get("env", {}))
        home, writable = self.jobdir, None
        if hdr.get("read_only"):  # the job's one writable place; its files are read-only
            home = os.path.join(self.jobdir, SCRATCH)
            os.mkdir(home, 0o700)
            writable = [home]
        env.update(HOME=home, TMPDIR=home, PWD=self.jobdir)
        keys = ("mode", "argv", "main", "rlimits", "seed", "return_bytes", "prelude", "postlude")
        job = {k: hdr.get(k) for k in keys}
        job.update(env=env, stdlib_path=self.stdlib_path, argv=hdr.get("argv") or [])
        job["writable"] = writable
        return job

    def new_proc(
        self,
        hdr: dict[str, Any],
        blobs: list[bytes],
        sink: Sink,
        on_ctl: Any,
        calls: list[dict[str, Any]] | None = None,
    ) -> JobProc:
        """Dispatch the job to the pre-forked child (forking one now if there is none)."""
        stdin = blobs[hdr["stdin_blob"]] if hdr.get("stdin_blob") is not None else b""
        source = blobs[hdr["source_blob"]] if hdr.get("source_blob") is not None else b""
        if hdr.get("mode") == "calls":  # answers carry return values; anything else is killed
            max_ctl, budget = int(hdr.get("return_bytes", 1 << 20)) + CTL_OVERHEAD, None
        else:  # only small records are legitimate: bound the zygote's work on forged ones
            max_ctl, budget = CTL_OVERHEAD, CTL_BUDGET
        proc, self.warm = self.warm, None
        if proc is None or not proc.usable():
            if proc is not None:
                proc.finish(lambda: 0)
            proc = self.fork_child()
        proc.guard = self.blame
        self.job_sids.add(proc.pid)
        job = self.child_job(hdr)
        extra: list[bytes] = []
        if calls:
            job["calls"] = []
            for c in calls:
                job["calls"].append({"id": c["id"], "name": c["name"], "blob": 1 + len(extra)})
                extra.append(blobs[c["args_blob"]])
        watch = hdr.get("mode") == "calls"  # its harness waits on the channel
        if self.own_fs and hdr.get("max_files"):
            proc.files_cap = int(hdr["max_files"])
        if self.own_ipc:
            proc.ipc_cap = MAX_IPC_OBJECTS
        if proc.fds:  # (not a child that never was: see ``fork_child``)
            proc.dispatch(job, source, stdin, sink, max_ctl, on_ctl, extra, watch)
        proc.ctl_budget = budget
        return proc

    def prefork(self) -> None:
        """Fork the next job's child now, while nothing waits on this worker."""
        if self.warm is not None:
            return
        try:
            self.warm = JobProc.prefork(self.jobdir, self.template.spawn)
        except TemplateDown:  # no job is running: a fresh template, once
            with contextlib.suppress(TemplateDown, OSError):
                self.template.restart()
                self.warm = JobProc.prefork(self.jobdir, self.template.spawn)

    def fork_child(self) -> JobProc:
        """A new child from the template. If the template is down, the job running now (a
        session re-forking its candidate) took it down: a child that is already dead and
        blamed, so the job fails as its own doing."""
        try:
            return JobProc.prefork(self.jobdir, self.template.spawn)
        except TemplateDown:
            why = self.template.damaged()
            if why is None:
                raise  # ours, not the job's: an internal error
            proc = JobProc(self.jobdir)
            proc.exited, proc.kill_reason = True, "protocol"
            self.sabotage = proc.violation = f"{why} (by this job)"
            return proc

    def blame(self, proc: JobProc) -> None:
        """Run once a job's processes are dead: a job that killed or stopped the fork template
        fails for it (a scored failure, not an infrastructure error)."""
        why = self.template.damaged()
        if why is not None:
            self.sabotage = proc.violation = f"{why} (by this job)"
            if proc.kill_reason in (None, "finished"):
                proc.kill_reason = "protocol"

    def heal(self) -> bool:
        """Between jobs (no job process alive): replace a damaged template; False if none
        can be started."""
        if self.template.usable():
            return True
        self.retire_warm()
        self.kill_rest()
        try:
            self.template.restart()
        except (TemplateDown, OSError):
            return False
        return True

    def retire_warm_if_dead(self) -> None:
        if self.warm is not None and not self.warm.usable():
            self.retire_warm()

    def retire_warm(self) -> None:
        proc, self.warm = self.warm, None
        if proc is not None:
            proc.kill("retired")
            proc.finish(lambda: 0)

    # ------------------------------------------------------------------ ops
    def op_run(self, hdr: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
        sink = Sink(int(hdr["output_bytes"]))
        frames = 0

        def count(p: JobProc, _h: dict[str, Any], _b: list[bytes]) -> None:
            nonlocal frames  # no program job needs these frames: bound the work they cost
            frames += 1
            if frames > MAX_EVENTS + 1:
                p.violation = "too many control frames"
                p.kill("protocol")

        try:
            jobdir.write_files(self.jobdir, hdr, blobs)
            proc = self.new_proc(hdr, blobs, sink, count)
        except Exception as e:
            self.cleanup()
            return {"ev": "done", "setup_error": f"{type(e).__name__}: {e}"}, [b"", b""]
        if proc.pump(proc.t0 + float(hdr["wall"])) == "deadline":
            proc.kill("wall")
        strays = proc.finish(self.kill_rest)
        out = [bytes(sink.buf["stdout"]), bytes(sink.buf["stderr"])]
        facts = proc.facts()
        collect = hdr.get("collect")
        if collect and proc.exit_code == 0 and proc.setup_error is None:
            try:
                with open(jobdir.safe_path(self.jobdir, collect), "rb") as f:
                    out.append(f.read(int(hdr.get("collect_max", 1 << 28))))
            except OSError as e:
                facts["collect_error"] = str(e)
        if hdr.get("keep") and proc.setup_error is None:
            facts["kept"], facts["kept_truncated"] = jobdir.keep_files(
                self.jobdir, hdr["keep"], out
            )
        facts.update(
            ev="done",
            setup_error=proc.setup_error,
            strays=strays,
            truncated=sorted(sink.truncated),
            clean=self.cleanup(),
        )
        return facts, out

    def op_session(self, hdr: dict[str, Any], blobs: list[bytes]) -> None:
        sess = Session(self, hdr, blobs)
        load = sess.start(hdr.get("calls") if hdr["op"] == "calls" else None)
        if hdr["op"] == "session":
            self.reply({"ev": "loaded", **load})
            while True:
                try:
                    msg, mblobs = self.host.recv()
                except (wire.FrameError, OSError):
                    sess.end()
                    raise SystemExit(0) from None
                if msg.get("op") != "call":
                    break
                res, vblobs = sess.call(msg, mblobs[0] if mblobs else b"[[],{}]")
                if self.sabotage is None and (why := self.template.damaged()) is not None:
                    self.sabotage = f"{why} (by this job)"  # (a pending kill counts)
                self.reply(*self.taint(res, vblobs))
            facts, out = sess.end()
            self.reply(facts, out)
            return
        results: list[dict[str, Any]] = []
        values: list[bytes] = []
        calls = hdr.get("calls", [])
        for i, call in enumerate(calls):
            res, vblobs = sess.call(call, blobs[call["args_blob"]], batch=calls[i:])
            if vblobs:
                res["blob"] = 2 + len(values)
                values.append(vblobs[0])
            results.append(res)
        facts, out = sess.end()
        if self.sabotage is not None:  # no answer of a job that damaged the sandbox counts
            results = [self.taint(res, [])[0] for res in results]
            values = []
        facts["calls"] = results
        self.reply(facts, out + values)

    def taint(self, res: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
        """A call's answer, or a protocol error once the job has damaged the fork template."""
        if self.sabotage is None:
            return res, blobs
        keep: dict[str, Any] = {k: res[k] for k in ("ev", "id", "name", "wall_time") if k in res}
        return {**keep, "status": "protocol_error", "msg": self.sabotage}, []


def main() -> None:
    cfg = json.loads(sys.argv[1])
    sys.stdout = sys.stderr  # fd 1 carries frames only
    # As pid 1, the zygote receives from jobs only the signals it has a handler for: install
    # none (Python's SIGINT handler would let a job raise KeyboardInterrupt in here).
    for sig in (signal.SIGINT, signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_IGN)
    jail.set_dumpable(False)
    if os.getpid() != 1:
        jail.set_subreaper()
    z = Zygote(cfg)
    os.environ.update(HOME=z.jobdir, TMPDIR=z.jobdir, PWD=z.jobdir)  # what jobs get
    z.seccomp = jail.install_seccomp() if cfg.get("seccomp", True) else "off"
    # Before any job data: a fresh interpreter (inheriting the seccomp filter) that every job
    # is forked from, so no job inherits memory of the zygote's (see ``template.py``).
    z.template.start()
    z.serve()


if __name__ == "__main__":
    main()
