"""Translate a ``SandboxJob`` into zygote requests, and the zygote's raw facts into a ``Result``.

Classification rules (``status``), first match wins:

1. a set-up failure reported by trusted code (before any untrusted code ran) -> ``internal_error``
2. the wall clock (killed from outside) or ``RLIMIT_CPU`` (SIGXCPU, or SIGKILL at the hard
   limit) -> ``timeout``
3. the memory cgroup's OOM counter moved, or the program died of ``MemoryError`` -> ``memory``
4. stdout or stderr exceeded its cap (the job is killed then) -> ``output_limit``
5. garbage on the control channel (the job was killed for it) -> ``runtime_error``
6. SIGKILL from nobody we know of -> ``killed``; any other signal (SIGSEGV, SIGABRT, SIGXFSZ...)
   or a non-zero exit -> ``runtime_error``
7. otherwise ``ok``.

``limits_hit`` lists every limit involved, independently of the status. Exception types and
errnos reported by the in-process harness run after untrusted code and could be forged, but
only into a *worse* classification of the candidate's own job, never into ``ok``.
"""

from __future__ import annotations

import errno
import math
import signal
from typing import Any

from gymforge.sandbox import wire
from gymforge.sandbox.languages import ARTEFACT, Language
from gymforge.sandbox.launch import BASE_ENV
from gymforge.sandbox.models import (
    MAX_KEPT_FILES,
    CallResult,
    CallStatus,
    Limits,
    LimitsHit,
    LoadInfo,
    Result,
    SandboxJob,
    Status,
)


def _bytes(v: str | bytes) -> bytes:
    return v.encode() if isinstance(v, str) else v


def rlimits(limits: Limits, lang: Language, nproc_slack: int) -> dict[str, int | None]:
    return {
        "as": limits.memory_bytes if lang.rlimit_as else None,
        "cpu": max(1, math.ceil(limits.cpu)),
        "fsize": limits.file_size_bytes,
        "nofile": limits.open_files,
        # RLIMIT_NPROC counts every task of the uid in the worker: the zygote is one of them.
        "nproc": max(limits.processes, lang.min_processes) + nproc_slack,
        "stack": limits.stack_bytes,
    }


def base_header(
    job: SandboxJob, lang: Language, limits: Limits, nproc_slack: int
) -> dict[str, Any]:
    env = dict(BASE_ENV)
    env.update(lang.env)
    env.update(job.env)
    return {
        "id": 0,
        "env": env,
        "rlimits": rlimits(limits, lang, nproc_slack),
        "wall": limits.wall_time,
        "output_bytes": limits.output_bytes,
        "return_bytes": limits.return_bytes,
        "call_timeout": limits.call_timeout,
        "seed": job.seed,
        "main": job.main_file or lang.main,
        "respawn": job.respawn,
        "stop_on_timeout": job.stop_on_timeout,
        "max_files": limits.files,
        "read_only": job.read_only_files,
    }


def job_files(job: SandboxJob, lang: Language) -> dict[str, bytes]:
    """The files a job's directory starts with: its extra files, then its source under the
    language's main file name, or ``job.main_file`` (the source always wins over an extra file
    of that name)."""
    files = {k: _bytes(v) for k, v in job.files.items()}
    files[job.main_file or lang.main] = _bytes(job.source)
    return files


def add_files(
    hdr: dict[str, Any], blobs: list[bytes], files: dict[str, bytes], mode: int = 0o644
) -> None:
    """Append ``files`` (name -> bytes, created with ``mode``) to the request."""
    hdr.setdefault("files", []).extend([name, mode] for name in files)
    hdr.setdefault("file_blobs", []).extend(range(len(blobs), len(blobs) + len(files)))
    blobs.extend(files.values())


def heap_mb(limits: Limits, cgroup: bool) -> str:
    """V8-style heap cap. With a memory cgroup the cgroup is the limit (its OOM kill is a
    countable fact), so the runtime's own cap sits above it; without one, below."""
    if cgroup:
        return str((limits.memory_bytes >> 20) + 256)
    return str(max(16, limits.memory_bytes * 3 // 4 >> 20))


def run_request(
    job: SandboxJob,
    lang: Language,
    jobdir: str,
    prog: bytes | None,
    nproc_slack: int,
    memory_cgroup: bool = False,
) -> tuple[dict[str, Any], list[bytes]]:
    """The ``run``/``calls`` request for a job (after any compilation). ``prog``
    is the job's compiled program: it travels in the request and becomes the job directory's
    ``ARTEFACT`` file, the only artefact the job can see."""
    hdr = base_header(job, lang, job.limits, nproc_slack)
    source = _bytes(job.source)
    blobs: list[bytes] = [source, _bytes(job.stdin)]
    hdr["source_blob"], hdr["stdin_blob"] = 0, 1
    if prog is None and (lang.kind == "exec" or job.mode == "program"):
        files = job_files(job, lang)
    else:  # compiled (the program is the artefact) or calls (loaded from memory)
        files = {k: _bytes(v) for k, v in job.files.items()}
    if prog is not None:
        files.pop(ARTEFACT, None)  # the compiled program wins, as the source does
        add_files(hdr, blobs, {ARTEFACT: prog}, mode=0o500)
    add_files(hdr, blobs, files)
    if job.keep_files:
        hdr["keep"] = {
            "max_bytes": job.limits.workspace_bytes,
            "max_files": MAX_KEPT_FILES,
            "skip": [hdr["main"], ARTEFACT] if prog is not None else [hdr["main"]],
        }
    mode = job.mode
    if lang.kind == "exec":
        hdr["op"], hdr["mode"] = "run", "exec"
        hdr["argv"] = lang.argv(
            lang.run,
            main=f"{jobdir}/{job.main_file or lang.main}",
            prog=f"{jobdir}/{ARTEFACT}",
            heap_mb=heap_mb(job.limits, memory_cgroup),
        ) + list(job.argv)
    elif mode == "program":
        hdr["op"], hdr["mode"], hdr["argv"] = "run", "program", list(job.argv)
    else:
        hdr["op"] = hdr["mode"] = "calls"
        calls = []
        for i, c in enumerate(job.calls or []):
            calls.append({"id": i, "name": c.name, "timeout": c.timeout, "args_blob": len(blobs)})
            blobs.append(encode_args(c.args, c.kwargs))
        hdr["calls"] = calls
        if job.prelude:
            hdr["prelude"] = job.prelude
        if job.postlude:
            hdr["postlude"] = job.postlude
    return hdr, blobs


def encode_args(args: Any, kwargs: dict[str, Any]) -> bytes:
    """Arguments as plain JSON ``[args, kwargs]`` (raises ``wire.Unserialisable``)."""
    return wire.dumps_plain([list(args), dict(kwargs)], max_bytes=1 << 28)


def compile_request(
    job: SandboxJob, lang: Language, jobdir: str, nproc_slack: int
) -> tuple[dict[str, Any], list[bytes]]:
    assert lang.compile is not None
    limits = job.compile_limits
    hdr = base_header(job, lang, limits, nproc_slack)
    hdr["rlimits"]["nproc"] = limits.processes + nproc_slack
    hdr["op"], hdr["mode"] = "run", "exec"
    hdr["argv"] = lang.argv(
        lang.compile, main=f"{jobdir}/{job.main_file or lang.main}", out=f"{jobdir}/{ARTEFACT}"
    )
    hdr["collect"] = ARTEFACT
    blobs: list[bytes] = [b"", b""]
    hdr["stdin_blob"] = 1
    add_files(hdr, blobs, job_files(job, lang))
    return hdr, blobs


# ----------------------------------------------------------------------------- results


def classify(
    f: dict[str, Any], limits: Limits, oom: bool, pids_hit: bool
) -> tuple[Status, LimitsHit]:
    exc = f.get("exception") or {}
    etype, eno = exc.get("etype"), exc.get("errno")
    sig, kill = f.get("signal"), f.get("kill_reason")
    cpu = f.get("cpu_time") or 0.0
    truncated = f.get("truncated") or []
    hit = LimitsHit(
        wall_time=kill in ("wall", "load_timeout", "call_timeout", "host_timeout"),
        cpu_time=sig == signal.SIGXCPU
        or (sig == signal.SIGKILL and kill is None and cpu >= math.ceil(limits.cpu) - 0.05),
        memory=oom or etype == "MemoryError",
        output=kill == "output" or bool(truncated),
        file_size=sig == signal.SIGXFSZ or eno == errno.EFBIG,
        open_files=eno in (errno.EMFILE, errno.ENFILE),
        processes=pids_hit,
        files=kill == "files",
    )
    if f.get("setup_error"):
        status = Status.INTERNAL_ERROR
    elif hit.timeout:
        status = Status.TIMEOUT
    elif hit.memory and (oom or f.get("exit_code") != 0):
        status = Status.MEMORY
    elif hit.output:
        status = Status.OUTPUT_LIMIT
    elif kill in ("protocol", "files", "ipc"):  # control-channel garbage; too many files/IPC
        status = Status.RUNTIME_ERROR
    elif sig == signal.SIGKILL:
        status = Status.KILLED
    elif sig is not None or f.get("exit_code") not in (0, None):
        status = Status.RUNTIME_ERROR
    else:
        status = Status.OK
    return status, hit


def _text(b: bytes) -> str:
    return b.decode("utf-8", "replace")


def to_result(
    f: dict[str, Any], blobs: list[bytes], job: SandboxJob, oom: bool, pids_hit: bool, **extra: Any
) -> Result:
    status, hit = classify(f, job.limits, oom, pids_hit)
    calls = None
    if f.get("calls") is not None:
        calls = [to_call(c, blobs, job.limits.return_bytes) for c in f["calls"]]
        status, hit = calls_status(status, hit, calls)
    load = f.get("load")
    if job.mode != "program" and status is Status.OK and not (load or {}).get("ok"):
        status = Status.RUNTIME_ERROR
    exc = f.get("exception") or {}
    trunc = f.get("truncated") or []
    errs = [e for e in (f.get("setup_error"), f.get("violation"), f.get("collect_error")) if e]
    return Result(
        status=status,
        exit_code=f.get("exit_code"),
        signal=f.get("signal"),
        stdout=_text(blobs[0]) if blobs else "",
        stderr=_text(blobs[1]) if len(blobs) > 1 else "",
        stdout_truncated="stdout" in trunc,
        stderr_truncated="stderr" in trunc,
        wall_time=f.get("wall_time") or 0.0,
        cpu_time=f.get("cpu_time"),
        max_rss_bytes=f.get("max_rss_bytes"),
        limits_hit=hit,
        exception=exc.get("etype") if isinstance(exc.get("etype"), str) else None,
        load=_load(load),
        calls=calls,
        restarts=f.get("restarts") or 0,
        stray_processes=f.get("strays") or 0,
        files=_kept(f, blobs) if job.keep_files else None,
        files_truncated=bool(f.get("kept_truncated")),
        error="; ".join(str(e) for e in errs) or None,
        **extra,
    )


def _kept(f: dict[str, Any], blobs: list[bytes]) -> dict[str, bytes]:
    kept: dict[str, bytes] = {}
    for entry in f.get("kept") or []:
        ok = isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], int)
        if ok and 0 <= entry[1] < len(blobs):
            kept[str(entry[0])] = blobs[entry[1]]
    return kept


def _load(load: dict[str, Any] | None) -> LoadInfo | None:
    if load is None:
        return None
    err = load.get("msg") or load.get("setup_error")
    if err is None and not load.get("ok") and load.get("exit_code") is not None:
        err = f"the candidate exited with code {load.get('exit_code')} while loading"
    if err is None and not load.get("ok") and load.get("signal") is not None:
        err = f"the candidate died of signal {load.get('signal')} while loading"
    if not load.get("ok") and load.get("kill_reason") == "load_timeout":
        err = "loading timed out"
    return LoadInfo(ok=bool(load.get("ok")), error_type=load.get("etype"), error=err)


def to_call(c: dict[str, Any], blobs: list[bytes], max_bytes: int | None = None) -> CallResult:
    """One call's result; its value decoded here with the bounded plain decoder (at most
    ``max_bytes``, the job's ``Limits.return_bytes``: the child never encodes more, so a
    longer value was forged)."""
    status = c.get("status")
    value, raw = None, None
    if status == "ok":
        try:
            raw_b = blobs[c["blob"]] if "blob" in c else blobs[0]
            raw = raw_b.decode()
            value = wire.loads_plain(raw, max_bytes=max_bytes)
        except (wire.Unserialisable, UnicodeDecodeError, IndexError, KeyError) as e:
            status, c = "protocol_error", {**c, "msg": f"undecodable return value: {e}"}
            raw = None
    elif status == "unserialisable" and "too large" in str(c.get("msg")):
        status = "too_large"
    handle = c.get("handle") if status == "ref" else None
    if status == "ref" and (type(handle) is not int or handle < 0):
        status, c = "protocol_error", {**c, "msg": "a kept value without a valid handle"}
    try:
        st = CallStatus(str(status))
    except ValueError:
        st = CallStatus.PROTOCOL_ERROR
    return CallResult(
        id=int(c.get("id") or 0),
        name=str(c.get("name")),
        status=st,
        value=value,
        value_json=raw,
        error_type=c.get("etype") if isinstance(c.get("etype"), str) else None,
        error=str(c["msg"])[:2000] if c.get("msg") is not None else None,
        wall_time=c.get("wall_time"),
        restarted=bool(c.get("restarted")),
        exit_code=c.get("exit_code"),
        signal=c.get("signal"),
        handle=handle if st is CallStatus.REF else None,
        value_type=str(c.get("type"))[:100] if st is CallStatus.REF else None,
    )


def calls_status(
    status: Status, hit: LimitsHit, calls: list[CallResult]
) -> tuple[Status, LimitsHit]:
    """A calls job is ``ok`` when the candidate loaded and every call returned or raised;
    exceptions are answers (the judge scores them), limits are not."""
    kinds = {c.status for c in calls}
    mem = any(c.error_type == "MemoryError" for c in calls)
    upd: dict[str, bool] = {}
    if CallStatus.TIMEOUT in kinds:
        upd["wall_time"] = True
    if mem:
        upd["memory"] = True
    if CallStatus.OUTPUT_LIMIT in kinds:
        upd["output"] = True
    hit = hit.model_copy(update=upd)
    if status is Status.INTERNAL_ERROR:
        return status, hit
    if hit.timeout:
        return Status.TIMEOUT, hit
    if hit.memory:
        return Status.MEMORY, hit
    if hit.output:
        return Status.OUTPUT_LIMIT, hit
    if kinds & {CallStatus.CRASHED, CallStatus.PROTOCOL_ERROR}:
        return Status.RUNTIME_ERROR, hit
    if status in (Status.KILLED, Status.RUNTIME_ERROR) and kinds <= {CallStatus.NOT_RUN}:
        return status, hit
    return Status.OK, hit
