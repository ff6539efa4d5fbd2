"""The containers of one Harbor episode: the agent's, and the verifier's fresh one.

**The agent's container** runs the task's image with the task's resources: ``--network
none`` unless ``[environment] allow_internet = true`` and the operator granted it
(``GYMFORGE_HARBOR_NETWORK``, :func:`networked`: then the engine's default network,
recorded in the verdict's facts), ``--memory``/``--cpus`` from ``[environment]``, a pids
limit, ``no-new-privileges``. Its entry process is ``sleep``; every tool is one ``exec``
bounded in time (``timeout`` inside, a kill outside) and in output (``cap`` bytes kept,
the rest read and dropped).

**The verifier's container** (``judge``) is started after the agent's is stopped (so
nothing the agent left running survives), from the task's *pristine* image, with three
mounts made then: the agent's workspace (the image's ``WORKDIR``, copied out of the stopped
container by the engine), ``/tests`` (a fresh read-only copy of the task's ``tests/``) and
``/logs/verifier`` (a fresh empty directory on this host). Whatever the agent changed
outside its workspace (a planted ``pytest``, a replaced ``bash``, a pre-written
``/logs/verifier/reward.txt``) is not in it, and the reward file is read from a directory
that did not exist while the agent acted.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shlex
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from gymforge.core.errors import InfraError
from gymforge.envs.harbor.taskdir import HarborTask
from gymforge.sandbox.docker_engine import engine, engine_env
from gymforge.verify.services import current

PIDS = 1024
KILL_GRACE = 5.0
ENGINE_SLACK = 30.0
LABEL = "gymforge.harbor=1"
SHELL = 'if command -v bash >/dev/null 2>&1; then exec bash -c "$1"; else exec sh -c "$1"; fi'


@dataclass(frozen=True)
class Exec:
    """What one command did: exit code (124 on timeout), capped output, what was cut."""

    exit_code: int
    stdout: bytes
    stderr: bytes
    timed_out: bool
    truncated: bool


async def _read(
    stream: asyncio.StreamReader | None, cap: int, keep_tail: bool
) -> tuple[bytes, bool]:
    if stream is None:
        return b"", False
    kept = bytearray()
    cut = False
    while chunk := await stream.read(65536):
        kept += chunk
        if len(kept) > cap:
            cut = True
            kept = kept[-cap:] if keep_tail else kept[:cap]
    return bytes(kept), cut


async def engine_run(
    *args: str, stdin: bytes | None = None, timeout: float, cap: int = 1 << 20, tail: bool = False
) -> Exec:
    """One engine command, its output capped, killed past ``timeout`` seconds."""
    proc = await asyncio.create_subprocess_exec(
        engine().cli,
        *args,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=engine_env(),
    )

    async def talk() -> Exec:
        if stdin is not None and proc.stdin is not None:
            proc.stdin.write(stdin)
            with contextlib.suppress(ConnectionError):  # it ended without reading all of it
                await proc.stdin.drain()
            proc.stdin.close()
        (out, cut_o), (err, cut_e) = await asyncio.gather(
            _read(proc.stdout, cap, tail), _read(proc.stderr, cap, tail)
        )
        return Exec(await proc.wait(), out, err, False, cut_o or cut_e)

    try:
        return await asyncio.wait_for(talk(), timeout)
    except TimeoutError:
        return Exec(124, b"", b"", True, False)
    finally:  # a timeout, or the episode cancelled: no engine client outlives its call
        if proc.returncode is None:
            proc.kill()
            await asyncio.shield(proc.wait())


def networked(task: HarborTask) -> bool:
    """Whether the agent's container gets the engine's default network: the task asks for
    it (``allow_internet``) and the operator granted it (``Settings.harbor_network``). That
    network reaches the host (its gateway is the host), so every service the host binds to
    all its addresses (an inference server's default, a Ray dashboard) would answer the
    agent: never without the operator's say."""
    return task.resources.allow_internet and current().settings.harbor_network


def _limits(task: HarborTask) -> list[str]:
    r = task.resources
    return [
        f"--memory={r.memory_mb}m",
        f"--memory-swap={r.memory_mb}m",
        f"--cpus={r.cpus:g}",
        f"--pids-limit={PIDS}",
        "--security-opt=no-new-privileges",
        f"--label={LABEL}",
    ]


class AgentBox:
    """The agent's running container (``start``, ``exec``, ``stop``, ``remove``)."""

    def __init__(self, task: HarborTask, image: str, workdir: str) -> None:
        self.task, self.image, self.workdir = task, image, workdir
        self.name = f"gymforge-harbor-{secrets.token_hex(8)}"
        self.started = False

    async def start(self) -> None:
        net = [] if networked(self.task) else ["--network=none"]
        r = await engine_run(
            "run", "-d", "--name", self.name, *net, *_limits(self.task),
            "--workdir", "/", "--entrypoint", "sleep", self.image, "infinity",
            timeout=120,
        )  # fmt: skip
        if r.exit_code != 0:
            await engine_run("rm", "-f", "-t", "0", self.name, timeout=60)  # created, not run
            err = r.stderr.decode("utf-8", "replace").strip()[-300:]
            raise InfraError(f"harbor task {self.task.name}: the container did not start: {err}")
        self.started = True
        # the workspace exists even when the image never created it (WORKDIR made it, or not)
        await self.exec(f"mkdir -p {shlex.quote(self.workdir)}", 30, 4096, cwd="/")

    async def exec(
        self, command: str, timeout: float, cap: int, stdin: bytes | None = None, cwd: str = ""
    ) -> Exec:
        """``command`` in a shell in the workspace, at most ``timeout`` seconds."""
        argv = [
            "exec", *(["-i"] if stdin is not None else []), "-w", cwd or self.workdir, self.name,
            "timeout", "-k", f"{KILL_GRACE:g}", f"{timeout:g}", "sh", "-c", SHELL, "sh", command,
        ]  # fmt: skip
        return await engine_run(*argv, stdin=stdin, timeout=timeout + ENGINE_SLACK, cap=cap)

    async def stop(self) -> None:
        """Kill every process of the container at once (nothing of the agent's may run on
        while it is judged); its files stay for ``copy_out``."""
        if self.started:
            await engine_run("kill", "--signal", "KILL", self.name, timeout=60)
            await engine_run("wait", self.name, timeout=60)

    async def archive_size(self, path: str, cap: int) -> int | None:
        """The size of the engine's tar stream of ``path`` in the (stopped) container, read
        and dropped; None past ``cap`` bytes (the stream is then cut). A sparse file costs
        the agent no disk but is copied out whole, so this bounds what ``copy_out`` writes
        on this host before it writes anything."""
        proc = await asyncio.create_subprocess_exec(
            engine().cli, "cp", f"{self.name}:{path}", "-",
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, env=engine_env(),
        )  # fmt: skip
        size = 0
        try:
            assert proc.stdout is not None
            async with asyncio.timeout(300):
                while chunk := await proc.stdout.read(1 << 20):
                    size += len(chunk)
                    if size > cap:
                        return None
                await proc.wait()
            return size
        finally:
            if proc.returncode is None:
                proc.kill()
                await asyncio.shield(proc.wait())

    async def copy_out(self, path: str, dest: Path) -> bool:
        """Copy ``path`` of the (stopped) container to ``dest`` with the engine; False when
        there is no such path."""
        r = await engine_run("cp", f"{self.name}:{path}", str(dest), timeout=300)
        return r.exit_code == 0

    async def remove(self) -> None:
        if self.started:
            await engine_run("rm", "-f", "-t", "0", self.name, timeout=60)
            self.started = False


@dataclass(frozen=True)
class JudgeRun:
    """What the verifier's run left: its exit, output tail, the reward files of
    /logs/verifier that are regular files within the cap (``logs``), and those entries
    named like a reward file that are not (``refused``: name to what it is)."""

    exit_code: int
    output_tail: str
    timed_out: bool
    logs: dict[str, bytes]
    refused: dict[str, str] = field(default_factory=dict)
    workspace_too_large: bool = False


LOG_FILE_CAP = 1 << 20
WORKSPACE_CAP = 1 << 30
"""The most of the agent's workspace (the engine's tar stream of it) copied out to be
judged; a larger one is a failure, ``workspace_too_large``, and the verifier never runs."""
REWARD_FILES = ("reward.txt", "reward.json")


def read_reward_files(logs: Path) -> tuple[dict[str, bytes], dict[str, str]]:
    """The reward files ``test.sh`` left in ``logs`` and the entries refused.

    Only ``REWARD_FILES`` are looked at (nothing else in the directory is opened, however
    many files the verifier's processes wrote), each only when it is a regular file of at
    most ``LOG_FILE_CAP`` bytes, opened without following a link and read no further than
    the cap. An entry with such a name that is anything else (a symlink, a FIFO, a
    directory, a larger file) is refused by name: code the tests ran shares the
    verifier's user and can put it there to swallow ``test.sh``'s own write.
    """
    files: dict[str, bytes] = {}
    refused: dict[str, str] = {}
    for name in REWARD_FILES:
        path = logs / name
        try:
            st = path.lstat()
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(st.st_mode):
            refused[name] = "a symlink" if stat.S_ISLNK(st.st_mode) else "not a regular file"
            continue
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                refused[name] = "not a regular file"
                continue
            data = os.read(fd, LOG_FILE_CAP + 1)
        finally:
            os.close(fd)
        if len(data) > LOG_FILE_CAP:
            refused[name] = f"larger than {LOG_FILE_CAP} bytes"
        else:
            files[name] = data
    return files, refused


JUDGE_SHELL = 'mkdir -p "$1" && cd "$1" && exec bash /tests/test.sh 2>&1'
"""test.sh as Harbor runs it: by bash, in the workspace, its stderr with its stdout."""


async def judge(
    task: HarborTask, image: str, workdir: str, agent: AgentBox | None, tail_chars: int
) -> JudgeRun:
    """Run ``tests/test.sh`` in a fresh container of the pristine image with the agent's
    workspace (see the module docstring); ``agent`` None judges the untouched image."""
    with tempfile.TemporaryDirectory(prefix="gymforge-harbor-judge-") as tmp:
        root = Path(tmp)
        tests, logs, ws = root / "tests", root / "logs", root / "ws"
        logs.mkdir()
        shutil.copytree(task.root / "tests", tests, symlinks=False)
        mounts = [f"--volume={tests}:/tests:ro", f"--volume={logs}:/logs/verifier:rw"]
        if agent is not None:
            await agent.stop()
            if await agent.archive_size(workdir, WORKSPACE_CAP) is None:
                return JudgeRun(-1, "", False, {}, workspace_too_large=True)
            if await agent.copy_out(workdir, ws):
                mounts.append(f"--volume={ws}:{workdir}:rw")
        name = f"gymforge-harbor-judge-{secrets.token_hex(8)}"
        timeout = task.verifier_timeout_sec
        try:
            r = await engine_run(
                "run", "--name", name, "--network=none", *_limits(task), *mounts,
                "--workdir", "/", "--entrypoint", "/bin/sh", image, "-c", JUDGE_SHELL, "sh",
                workdir, timeout=timeout, cap=tail_chars * 4, tail=True,
            )  # fmt: skip
        finally:
            await engine_run("rm", "-f", "-t", "0", name, timeout=60)
        output = (r.stdout + r.stderr).decode("utf-8", "replace")
        files, refused = read_reward_files(logs)
        return JudgeRun(r.exit_code, output[-tail_chars:], r.timed_out, files, refused)
