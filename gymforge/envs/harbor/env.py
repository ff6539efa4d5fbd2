"""``harbor:PATH``: Harbor tasks (Terminal-Bench 2, Repo2RLEnv, ...) as gymforge tasks.

``PATH`` is one task directory or a directory of them (``taskdir``). Each task is served
from a hash-pinned dataset (ids ``harbor.NAME@HASH12``), its prompt the task's
``instruction.md``. The agent works in the task's container (``container.AgentBox``)
through three tools, ``run`` (a shell command with a timeout, output capped),
``read_file`` and ``write_file``, and ends by replying. The image is built, or reused by
content hash, when the episode's first tool call needs the container (``images``), so a
reset costs no engine call; the container is removed when the episode is judged, at the
next reset, or at ``close``. Judging runs ``tests/test.sh`` in a fresh container
(``container.judge``) and reads its reward file (``verdicts``). The oracle writes the
task's ``solution/`` into the container and runs ``solve.sh`` with the same tools.
"""

from __future__ import annotations

import asyncio
import random
import shlex
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from gymforge.core.env import EnvSpec
from gymforge.core.episode import Budget
from gymforge.core.errors import ToolError
from gymforge.core.types import Action, Reply, State, Task, ToolCall
from gymforge.core.verdict import Verdict
from gymforge.envs.harbor.container import AgentBox, Exec, judge, networked
from gymforge.envs.harbor.images import ensure_image, require_bases
from gymforge.envs.harbor.redteam import REDTEAM
from gymforge.envs.harbor.taskdir import HarborTask, dockerfile_facts, read_dataset
from gymforge.envs.harbor.verdicts import HarborReward, verdict_of
from gymforge.envs.interop_rows import rows_dataset
from gymforge.kit.tool_env import ToolEnv
from gymforge.qa_profile import QAProfile, ThroughputBudget, not_supplied
from gymforge.sandbox.docker_engine import engine
from gymforge.sandbox.normalize import normalize_output
from gymforge.settings import HARBOR_NETWORK_ENV
from gymforge.tasks import Split, TaskSource
from gymforge.tools import tool
from gymforge.tools.shell import ShellTool

FRAMEWORK = "Harbor"
SHOWN_BYTES = 16_000
READ_BYTES = 64_000
WRITE_BYTES = 1 << 20
TAIL_CHARS = 2_000
MAX_RUN_TIMEOUT = 1_800
ORACLE_CHECKS = ("scripted_baselines", "verifier_redteam", "error_paths")
SYSTEM_PROMPT = (
    "You are working in a Linux container through tools: run (a shell command in the "
    "working directory), read_file and write_file. Do the task; when it is done, reply "
    "with a short summary (your reply ends the episode and the task's tests judge the "
    "container's working directory)."
)


class HarborTruth(BaseModel):
    """Which task directory a task is (the files are read from it, pinned by the hash)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    content_hash: str


@dataclass
class HarborWorld:
    """One episode: its task, the image once built and the agent's container once started."""

    task: HarborTask
    workdir: str
    image: str | None = None
    box: AgentBox | None = None
    commands: int = 0
    writes: list[str] = field(default_factory=list)


class HarborEnv(ToolEnv[HarborTruth, HarborWorld]):
    """Base of the per-path classes ``env_class`` builds; not used directly."""

    harbor_tasks: dict[str, HarborTask]
    budget = Budget(max_steps=100, max_tokens=262_144)
    reward = HarborReward()
    system_prompt = SYSTEM_PROMPT
    shell_tool = ShellTool("run")

    def __init__(self) -> None:
        super().__init__()
        self._leftover: set[asyncio.Task[None]] = set()

    def preflight(self) -> None:
        """An engine, and every task's base image on this machine (one line naming a
        missing one and how to provide it)."""
        engine()
        require_bases(list(self.harbor_tasks.values()))

    def _task(self, task: Task) -> HarborTask:
        truth = self.truth_of(task)
        return self.harbor_tasks[f"harbor.{truth.name}@{truth.content_hash[:12]}"]

    def init_world(self, task: Task, r: random.Random) -> HarborWorld:
        if self._world is not None and self._world.box is not None:
            self._discard(self._world.box)
        ht = self._task(task)
        if ht.resources.docker_image is not None:
            workdir = "/app"
        else:
            _, workdir = dockerfile_facts(
                ht.dockerfile.read_text(encoding="utf-8", errors="replace")
            )
        return HarborWorld(task=ht, workdir=workdir)

    def _discard(self, box: AgentBox) -> None:
        pending = asyncio.get_running_loop().create_task(box.remove())
        self._leftover.add(pending)
        pending.add_done_callback(self._leftover.discard)

    async def close(self) -> None:
        if self._world is not None and self._world.box is not None:
            await self._world.box.remove()
        if self._leftover:
            await asyncio.gather(*self._leftover, return_exceptions=True)
        await super().close()

    def state(self) -> State:
        w = self._world
        if w is None:
            return {}
        return {"task": w.task.task_id, "commands": w.commands, "writes": list(w.writes)}

    async def _box(self) -> AgentBox:
        w = self.world
        if w.box is None:
            w.image = await ensure_image(w.task)
            box = AgentBox(w.task, w.image, w.workdir)
            w.box = box
            await box.start()
        return w.box

    def _path(self, path: str) -> str:
        if not path.strip() or len(path) > 1_000 or "\0" in path:
            raise ToolError("invalid_arguments", "path must have 1 to 1000 characters")
        return path if path.startswith("/") else f"{self.world.workdir.rstrip('/')}/{path}"

    @staticmethod
    def _text(r: Exec) -> str:
        return normalize_output((r.stdout + r.stderr).decode("utf-8", "replace"))

    @tool(writes=True)
    async def run(self, command: str, timeout: int = 60) -> dict[str, Any]:
        """Run a shell command (bash when the container has it) in the working directory.

        Args:
            command: The command line; pipes, redirections and && work.
            timeout: Seconds before the command is killed (1 to the task's agent timeout).
        """
        limit = int(min(self.world.task.agent_timeout_sec, MAX_RUN_TIMEOUT))
        if not command.strip() or len(command) > 20_000:
            raise ToolError("invalid_arguments", "command must have 1 to 20000 characters")
        if not 1 <= timeout <= limit:
            raise ToolError("invalid_arguments", f"timeout must be 1 to {limit} seconds")
        box = await self._box()
        r = await box.exec(command, timeout, SHOWN_BYTES)
        self.world.commands += 1
        return {
            "exit_code": r.exit_code,
            "output": self._text(r),
            "timed_out": r.timed_out or r.exit_code == 124,
            "output_truncated": r.truncated,
        }

    @tool
    async def read_file(self, path: str) -> str:
        """Read a text file (at most 64000 bytes are shown).

        Args:
            path: The file, absolute or relative to the working directory.
        """
        box = await self._box()
        r = await box.exec(f"cat -- {shlex.quote(self._path(path))}", 30, READ_BYTES)
        if r.exit_code != 0:
            raise ToolError("not_found", self._text(r).strip()[:300] or f"cannot read {path}")
        return r.stdout.decode("utf-8", "replace")

    @tool(writes=True)
    async def write_file(self, path: str, content: str) -> dict[str, Any]:
        """Write a text file (its directories are created), replacing any file there.

        Args:
            path: The file, absolute or relative to the working directory.
            content: The whole new text of the file.
        """
        target = self._path(path)
        data = content.encode()
        if len(data) > WRITE_BYTES:
            raise ToolError("invalid_arguments", f"content over {WRITE_BYTES} bytes")
        box = await self._box()
        q = shlex.quote(target)
        r = await box.exec(f'mkdir -p -- "$(dirname -- {q})" && cat > {q}', 30, 4_096, data)
        if r.exit_code != 0:
            raise ToolError(
                "permission_denied", self._text(r).strip()[:300] or f"cannot write {path}"
            )
        self.world.writes.append(target)
        return {"path": target, "bytes": len(data)}

    async def verify(self, task: Task, world: HarborWorld, reply: str) -> Verdict:
        ht = world.task
        image = world.image or await ensure_image(ht)
        try:
            run = await judge(ht, image, world.workdir, world.box, TAIL_CHARS)
        finally:
            if world.box is not None:
                await world.box.remove()
        facts: dict[str, object] = {"network": networked(ht)}
        if ht.resources.allow_internet and not networked(ht):
            facts["network_withheld"] = f"the task asks for it; {HARBOR_NETWORK_ENV} grants it"
        v = verdict_of(run, facts)
        return v.model_copy(
            update={"facts": {**v.facts, "output_tail": normalize_output(run.output_tail)}}
        )

    def oracle_plan(self, task: Task) -> list[Action] | None:
        ht = self._task(task)
        solution = ht.root / "solution"
        if not ht.has_solution:
            return None
        plan: list[Action] = []
        for p in sorted(solution.rglob("*")):
            if p.is_file() and not p.is_symlink():
                try:
                    text = p.read_text(encoding="utf-8")
                except UnicodeDecodeError:
                    return None  # a binary solution file cannot travel through write_file
                rel = p.relative_to(solution).as_posix()
                plan.append(
                    ToolCall(
                        name="write_file", arguments={"path": f"/solution/{rel}", "content": text}
                    )
                )
        timeout = int(min(ht.agent_timeout_sec, MAX_RUN_TIMEOUT))
        plan.append(
            ToolCall(
                name="run", arguments={"command": "bash /solution/solve.sh", "timeout": timeout}
            )
        )
        plan.append(Reply(text="Done."))
        return plan


def _dataset(tasks: list[HarborTask], source: str) -> TaskSource:
    rows = [
        {"name": t.name, "content_hash": t.content_hash, "instruction": t.instruction}
        for t in tasks
    ]
    by_name = {t.name: t for t in tasks}
    ds = rows_dataset(
        "harbor",
        source,
        rows,
        "train",
        lambda row: row["instruction"],
        lambda i, row: HarborTruth(name=row["name"], content_hash=row["content_hash"]),
    )
    # ids, families, difficulty and split from the task directories, not the row position
    ds._index.clear()
    for i, task in enumerate(list(ds.tasks)):
        ht = by_name[task.truth["name"]]
        ds.tasks[i] = task.model_copy(
            update={
                "task_id": ht.task_id,
                "family": ht.family,
                "difficulty": ht.difficulty,
                "split": ht.split,
                "params": {"name": ht.name, "heldout": ht.split == "heldout"},
            }
        )
        ds._index[ht.task_id] = i
    families = {t.family for t in tasks}
    split = Split(regions={f: {"harbor_split": _held} for f in families})
    return TaskSource({}, split).with_dataset(ds)


def _held(params: Any) -> bool:
    return bool(params.get("heldout"))


@cache
def env_class(path: str) -> type[HarborEnv]:
    """The environment class of the Harbor task(s) at ``path`` (read once per process)."""
    tasks = read_dataset(Path(path))
    source = f"harbor:{path}"
    not_applicable: dict[str, str] = {}
    if not any(t.split == "heldout" for t in tasks):
        not_applicable["heldout_exclusion"] = not_supplied(
            FRAMEWORK,
            "no task is held out ([metadata] split, heldout.txt, or the hash rule for 5 or "
            "more tasks)",
        )
    lacking = [t.name for t in tasks if not t.has_solution]
    if lacking:
        why = f"no oracle: {', '.join(lacking[:5])} has no solution/solve.sh"
        not_applicable.update({c: not_supplied(FRAMEWORK, why) for c in ORACLE_CHECKS})
    not_applicable["throughput"] = not_supplied(
        FRAMEWORK,
        "a step is a container exec and judging a container run of the task's own test.sh, "
        "whose cost is the task's (benchmarks/harbor.py measures the engine's share)",
    )
    attrs: dict[str, Any] = {
        "harbor_tasks": {t.task_id: t for t in tasks},
        "spec": EnvSpec(
            source,
            "1.0.0",
            renderer_version="1",
            description=f"{len(tasks)} Harbor task(s) from {path}.",
        ),
        "tasks": _dataset(tasks, source),
        "qa": QAProfile(
            redteam=REDTEAM,
            throughput=ThroughputBudget(reset_p50_ms=50.0, steps_per_s=0.5, concurrency=2),
            not_applicable=not_applicable,
        ),
    }
    if lacking:
        attrs["oracle_action"] = None
    safe = "".join(c if c.isalnum() else "_" for c in Path(path).name)[:40]
    return type(f"Harbor_{safe}", (HarborEnv,), attrs)
