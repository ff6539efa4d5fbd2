"""Typed jobs and results. A ``Result`` holds facts only: nothing in it is inferred from what the
program printed, and the ``status`` is derived from how the process ended and which limits the
sandbox enforced.

Two job modes share one ``SandboxJob`` type:

- **program** (default): run ``source`` (plus ``files``) with ``stdin`` and ``argv``; compiled
  languages are compiled first (inside the sandbox, artefacts cached by source hash).
- **calls** (``calls`` set, Python only): the function-call service. The candidate is loaded
  once; each ``Call`` is answered with its return value serialised as plain data
  (``CallResult.value`` is rebuilt from JSON in the judge's process; see ``wire``). Test code
  never enters the sandbox: the judge compares decoded values in its own process.
"""

from __future__ import annotations

import posixpath
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from gymforge.sandbox.landlock import SCRATCH

MiB = 1 << 20
MAX_KEPT_FILES = 256


class Status(StrEnum):
    OK = "ok"
    RUNTIME_ERROR = "runtime_error"  # non-zero exit, uncaught exception, crash signal
    TIMEOUT = "timeout"  # wall-clock or CPU limit
    MEMORY = "memory"
    OUTPUT_LIMIT = "output_limit"
    KILLED = "killed"  # SIGKILL from no limit of ours (e.g. the kernel's OOM killer)
    COMPILE_ERROR = "compile_error"
    INTERNAL_ERROR = "internal_error"  # the sandbox failed; not the candidate's fault


class CallStatus(StrEnum):
    OK = "ok"  # returned; ``value`` holds the plain data
    EXCEPTION = "exception"  # raised (including SystemExit); ``error_type`` names it
    TIMEOUT = "timeout"
    CRASHED = "crashed"  # the process died during the call (os._exit, signal, ...)
    OUTPUT_LIMIT = "output_limit"
    UNSERIALISABLE = "unserialisable"  # the return value is not plain data
    TOO_LARGE = "too_large"  # the return value exceeds ``Limits.return_bytes``
    PROTOCOL_ERROR = "protocol_error"  # the candidate wrote garbage on the control channel
    NOT_RUN = "not_run"  # load failed, session time exhausted, or the process died
    REF = "ref"  # not plain data, kept in the sandbox (``keep`` calls); ``handle`` names it


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Limits(_Frozen):
    """Per-job resource limits. Sizes in bytes, times in seconds."""

    wall_time: Annotated[float, Field(gt=0, description="wall clock, enforced from outside")] = 10.0
    cpu_time: Annotated[float | None, Field(gt=0, description="RLIMIT_CPU; default: wall_time")] = (
        None
    )
    memory_bytes: Annotated[int, Field(gt=0, description="RLIMIT_AS or the memory cgroup")] = (
        512 * MiB
    )
    file_size_bytes: Annotated[int, Field(ge=0, description="RLIMIT_FSIZE")] = 64 * MiB
    open_files: Annotated[int, Field(ge=8, description="RLIMIT_NOFILE")] = 64
    processes: Annotated[
        int, Field(ge=1, description="processes+threads: RLIMIT_NPROC, pids cgroup")
    ] = 32
    output_bytes: Annotated[int, Field(ge=0, description="cap per stream; the job dies beyond")] = (
        1 * MiB
    )
    call_timeout: Annotated[
        float, Field(gt=0, description="per call and per load (calls mode)")
    ] = 5.0
    return_bytes: Annotated[int, Field(gt=0, description="cap on an encoded return value")] = (
        1 * MiB
    )
    stack_bytes: Annotated[
        int | None, Field(gt=0, description="RLIMIT_STACK; default: inherited")
    ] = None
    workspace_bytes: Annotated[
        int, Field(ge=0, description="cap on the files a keep_files job hands back")
    ] = 4 * MiB
    files: Annotated[
        int,
        Field(
            ge=1,
            description="files, directories and links the job directory may hold; beyond it "
            "the job is killed (checked from outside every few ms, so clean-up stays cheap)",
        ),
    ] = 10_000

    @property
    def cpu(self) -> float:
        return self.cpu_time if self.cpu_time is not None else self.wall_time


COMPILE_LIMITS = Limits(
    wall_time=30.0,
    memory_bytes=2048 * MiB,
    file_size_bytes=256 * MiB,
    processes=32,
    output_bytes=64 * 1024,
)


class Call(_Frozen):
    """One call of the candidate's function ``name`` with plain-data arguments."""

    name: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = Field(default_factory=dict)
    timeout: Annotated[float | None, Field(gt=0, description="default: Limits.call_timeout")] = None


class SandboxJob(_Frozen):
    """What to run. ``source`` is the main file for ``language``; ``files`` are extra files
    (relative paths) in the job directory (one named like the main file is replaced by it).
    ``seed`` seeds Python's ``random`` in the child (``PYTHONHASHSEED`` is always 0, so set and
    dict orders are reproducible)."""

    language: str = "python"
    source: str | bytes = ""
    files: dict[str, str | bytes] = Field(default_factory=dict)
    stdin: str | bytes = b""
    argv: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    limits: Limits = Field(default_factory=lambda: Limits())
    compile_limits: Limits = COMPILE_LIMITS
    calls: list[Call] | None = None
    prelude: Annotated[
        str,
        Field(
            description="calls mode: the task's own module code (a HumanEval prompt, MBPP "
            "imports), run in the candidate's module before the candidate; never tests"
        ),
    ] = ""
    postlude: Annotated[
        str,
        Field(
            description="calls mode: the task's code that runs in the candidate's module "
            "after the candidate (MBPP set-up code, which may use the solution's classes); "
            "never tests"
        ),
    ] = ""
    seed: int | None = None
    respawn: Annotated[
        bool, Field(description="calls mode: reload the candidate after a crash")
    ] = True
    stop_on_timeout: Annotated[
        bool, Field(description="calls mode: after a call times out, run no more calls")
    ] = False
    keep_files: Annotated[
        bool,
        Field(
            description="program mode: hand back the job directory's regular files (up to "
            "Limits.workspace_bytes and MAX_KEPT_FILES) in Result.files, so a caller can carry "
            "them into its next job: a workspace that persists without pinning a worker"
        ),
    ] = False
    read_only_files: Annotated[
        bool,
        Field(
            description="the job cannot change its own files, not even for a moment: the "
            "kernel (Landlock) refuses every write, create, rename, link, truncate or delete "
            "under the job directory but in its scratch directory (HOME and TMPDIR, "
            "landlock.SCRATCH); the job fails as internal_error where the kernel has no "
            "Landlock (gymforge sandbox doctor says)"
        ),
    ] = False
    main_file: Annotated[
        str | None,
        Field(
            description="program mode: the main file's name in the job directory (default: "
            "the language's, e.g. main.py), for jobs whose files may hold one of that name; "
            "a plain file name that none of ``files`` has"
        ),
    ] = None

    @field_validator("files")
    @classmethod
    def _paths(cls, v: dict[str, str | bytes]) -> dict[str, str | bytes]:
        for name in v:
            check_relpath(name)
        return v

    @model_validator(mode="after")
    def _modes(self) -> SandboxJob:
        if self.keep_files and self.calls is not None:
            raise ValueError("keep_files is for program jobs only")
        if self.read_only_files and any(
            p == SCRATCH or p.startswith(SCRATCH + "/") for p in self.files
        ):
            raise ValueError(f"{SCRATCH}/ is the job's scratch directory, not a job file")
        m = self.main_file
        if m is not None and ("/" in m or m == SCRATCH or m in self.files or check_relpath(m) != m):
            raise ValueError(f"main_file must be a plain file name no job file has: {m!r}")
        return self

    @property
    def mode(self) -> str:
        return "calls" if self.calls is not None else "program"


def check_relpath(name: str) -> str:
    norm = posixpath.normpath(name)
    escapes = norm == ".." or norm.startswith("../")  # ``..oops`` is a name like any other
    if not name or name.startswith("/") or escapes or "\0" in name or norm == ".":
        raise ValueError(f"file name must be a relative path inside the job directory: {name!r}")
    return norm


class LimitsHit(_Frozen):
    """Which limits the job ran into. ``memory``, ``open_files`` and ``processes`` come from
    cgroup counters where available, else from the error the program died of (best effort)."""

    wall_time: bool = False
    cpu_time: bool = False
    memory: bool = False
    output: bool = False
    file_size: bool = False
    open_files: bool = False
    processes: bool = False
    files: bool = False

    @property
    def timeout(self) -> bool:
        return self.wall_time or self.cpu_time

    def names(self) -> list[str]:
        return [k for k, v in self.model_dump().items() if v]


class LoadInfo(_Frozen):
    """How loading the candidate went (calls mode)."""

    ok: bool
    error_type: str | None = None
    error: str | None = None


class CallResult(_Frozen):
    id: int
    name: str
    status: CallStatus
    value: Any = None  # decoded plain data; meaningful only when status is ok
    value_json: str | None = None  # the raw plain JSON, for logs
    error_type: str | None = None
    error: str | None = None
    wall_time: float | None = None
    restarted: bool = False  # the candidate was reloaded before this call
    exit_code: int | None = None
    signal: int | None = None
    handle: int | None = None  # status ref: the kept object's handle in this session
    value_type: str | None = None  # status ref: the kept object's type name (for notes)

    @property
    def ok(self) -> bool:
        return self.status is CallStatus.OK


class Result(_Frozen):
    status: Status
    exit_code: int | None = None
    signal: int | None = None
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    wall_time: float = 0.0
    cpu_time: float | None = None
    max_rss_bytes: int | None = None
    limits_hit: LimitsHit = Field(default_factory=LimitsHit)
    compile_output: str | None = None
    compile_cached: bool | None = None
    exception: Annotated[str | None, Field(description="exception type the harness reported")] = (
        None
    )
    load: LoadInfo | None = None
    calls: list[CallResult] | None = None
    restarts: int = 0
    files: Annotated[
        dict[str, bytes] | None,
        Field(description="keep_files jobs: the job directory's regular files afterwards"),
    ] = None
    files_truncated: Annotated[
        bool, Field(description="some files were left out (size or count caps)")
    ] = False
    stray_processes: Annotated[
        int, Field(description="job processes still alive after it ended")
    ] = 0
    error: Annotated[str | None, Field(description="internal error or protocol violation")] = None
    worker: int | None = None
    backend: str = ""

    @property
    def ok(self) -> bool:
        return self.status is Status.OK
