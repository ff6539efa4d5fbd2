"""Reading Harbor task directories: the format as gymforge reads it (``docs/harbor.md``).

A task directory holds ``instruction.md`` (the prompt), ``task.toml`` (``[metadata]``,
``[agent]``, ``[verifier]`` and ``[environment]`` tables), ``environment/Dockerfile`` (the
starting container; a compose file is refused), ``tests/test.sh`` (the verifier) and,
optionally, ``solution/solve.sh`` (the reference). ``harbor:PATH`` names one such directory
or a directory whose subdirectories are tasks (a dataset).

Every task is identified by its directory name and a hash of all its files
(``harbor.NAME@HASH12``): editing any file gives the task a new id, so a recorded run never
replays against other files. Its family is ``harbor.CATEGORY`` (``[metadata] category``),
its difficulty ``[metadata] difficulty`` (easy 1, medium 2, hard 3). Held out are the
tasks whose ``[metadata] split`` is ``"heldout"``, those named (one per line) in the
dataset's ``heldout.txt``, and, when neither says anything and the dataset has at least
``RULE_MIN_TASKS`` tasks, those whose name hashes into the last fifth (``held_by_rule``).
"""

from __future__ import annotations

import hashlib
import os
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from gymforge.core.errors import UserError

MAX_TASK_BYTES = 256 << 20
MAX_INSTRUCTION = 200_000
RULE_MIN_TASKS = 5
DIFFICULTY = {"easy": 1, "medium": 2, "hard": 3}
COMPOSE = ("docker-compose.yaml", "docker-compose.yml", "compose.yaml", "compose.yml")
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


@dataclass(frozen=True)
class Resources:
    """What ``[environment]`` asks of the container."""

    cpus: float = 1.0
    memory_mb: int = 2048
    allow_internet: bool = False
    docker_image: str | None = None
    build_timeout_sec: float = 600.0


@dataclass(frozen=True)
class HarborTask:
    """One task directory, read and checked."""

    name: str
    root: Path
    content_hash: str
    instruction: str
    category: str
    difficulty: int
    tags: tuple[str, ...]
    split: Literal["train", "heldout"]
    agent_timeout_sec: float
    verifier_timeout_sec: float
    resources: Resources
    has_solution: bool
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def task_id(self) -> str:
        return f"harbor.{self.name}@{self.content_hash[:12]}"

    @property
    def family(self) -> str:
        return f"harbor.{self.category}"

    @property
    def dockerfile(self) -> Path:
        return self.root / "environment" / "Dockerfile"


def is_task_dir(path: Path) -> bool:
    return (path / "task.toml").is_file() or (path / "instruction.md").is_file()


def files_hash(root: Path) -> str:
    """SHA-256 over every file's relative path and bytes (symlinks by their target text),
    in sorted order; a task larger than ``MAX_TASK_BYTES`` is refused."""
    digest = hashlib.sha256()
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            p = Path(dirpath) / name
            rel = p.relative_to(root).as_posix()
            data = ("symlink:" + os.readlink(p)).encode() if p.is_symlink() else p.read_bytes()
            total += len(data)
            if total > MAX_TASK_BYTES:
                raise UserError(f"harbor task {root}: more than {MAX_TASK_BYTES >> 20} MB of files")
            digest.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()


def _table(doc: dict[str, Any], name: str, where: Path) -> dict[str, Any]:
    value = doc.get(name, {})
    if not isinstance(value, dict):
        raise UserError(f"{where}: [{name}] must be a table")
    return value


def _number(table: dict[str, Any], key: str, default: float, where: str) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise UserError(f"{where}: {key} must be a positive number, not {value!r}")
    return float(value)


def _memory_mb(env: dict[str, Any], where: str) -> int:
    if "memory_mb" in env:
        return int(_number(env, "memory_mb", 2048, where))
    text = env.get("memory")
    if text is None:
        return 2048
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGkmg])?[Bb]?\s*", str(text))
    if m is None:
        raise UserError(f"{where}: memory {text!r} is not a size like '2G' or '512M'")
    scale = {"k": 1 / 1024, "m": 1, "g": 1024, None: 1 / (1 << 20)}[
        (m.group(2) or "").lower() or None
    ]
    return max(1, int(float(m.group(1)) * scale))


def read_task(root: Path, split_names: frozenset[str] = frozenset()) -> HarborTask:
    """Read one task directory; ``UserError`` naming the file for anything missing or wrong."""
    root = root.resolve()
    name = root.name
    if not NAME_RE.fullmatch(name):
        raise UserError(f"harbor task {root}: its directory name must match {NAME_RE.pattern}")
    toml_path = root / "task.toml"
    try:
        doc = tomllib.loads(toml_path.read_text(encoding="utf-8")) if toml_path.is_file() else {}
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise UserError(f"{toml_path}: not valid TOML: {err}") from None
    instruction_path = root / "instruction.md"
    if not instruction_path.is_file():
        raise UserError(f"harbor task {root}: no instruction.md (the prompt)")
    instruction = instruction_path.read_text(encoding="utf-8", errors="replace")
    if not instruction.strip() or len(instruction) > MAX_INSTRUCTION:
        raise UserError(f"{instruction_path}: must have 1 to {MAX_INSTRUCTION} characters")
    for compose in COMPOSE:
        if (root / "environment" / compose).exists():
            raise UserError(
                f"harbor task {root}: environment/{compose}: compose (multi-container) tasks "
                "are not supported; give one environment/Dockerfile"
            )
    meta = _table(doc, "metadata", toml_path)
    agent = _table(doc, "agent", toml_path)
    verifier = _table(doc, "verifier", toml_path)
    env = _table(doc, "environment", toml_path)
    where = str(toml_path)
    image = env.get("docker_image")
    if image is not None and (not isinstance(image, str) or not image.strip()):
        raise UserError(f"{where}: docker_image must be an image name")
    if image is None and not (root / "environment" / "Dockerfile").is_file():
        raise UserError(f"harbor task {root}: no environment/Dockerfile and no docker_image")
    if not (root / "tests" / "test.sh").is_file():
        raise UserError(f"harbor task {root}: no tests/test.sh (the verifier)")
    allow = env.get("allow_internet", False)
    if not isinstance(allow, bool):
        raise UserError(f"{where}: allow_internet must be true or false")
    resources = Resources(
        cpus=_number(env, "cpus", 1.0, where),
        memory_mb=_memory_mb(env, where),
        allow_internet=allow,
        docker_image=image,
        build_timeout_sec=_number(env, "build_timeout_sec", 600.0, where),
    )
    split = meta.get("split", "heldout" if name in split_names else "train")
    if split not in ("train", "heldout"):
        raise UserError(f"{where}: [metadata] split must be 'train' or 'heldout', not {split!r}")
    difficulty = meta.get("difficulty", "")
    category = str(meta.get("category") or "uncategorised")
    if not NAME_RE.fullmatch(category):
        category = re.sub(r"[^A-Za-z0-9._-]+", "-", category).strip("-")[:64] or "uncategorised"
    tags = meta.get("tags", [])
    return HarborTask(
        name=name,
        root=root,
        content_hash=files_hash(root),
        instruction=instruction,
        category=category,
        difficulty=DIFFICULTY.get(str(difficulty).lower(), 0),
        tags=tuple(str(t) for t in tags) if isinstance(tags, list) else (),
        split=split,
        agent_timeout_sec=_number(agent, "timeout_sec", 600.0, where),
        verifier_timeout_sec=_number(verifier, "timeout_sec", 600.0, where),
        resources=resources,
        has_solution=(root / "solution" / "solve.sh").is_file(),
        metadata={k: v for k, v in meta.items() if isinstance(v, str | int | float | bool)},
    )


def held_by_rule(name: str) -> bool:
    """The documented default rule: held out when the first byte of SHA-256(name) is below
    51 (about a fifth of the tasks, the same ones on every machine)."""
    return hashlib.sha256(name.encode()).digest()[0] < 51


def read_dataset(path: Path) -> list[HarborTask]:
    """The tasks of ``path``: the directory itself when it is a task, else each of its
    subdirectories that is one (sorted by name), with the held-out rule applied."""
    path = Path(path)
    if not path.is_dir():
        raise UserError(f"harbor:{path}: no such directory")
    if is_task_dir(path):
        return [read_task(path)]
    listed = path / "heldout.txt"
    names: frozenset[str] = frozenset()
    if listed.is_file():
        names = frozenset(ln.strip() for ln in listed.read_text().splitlines() if ln.strip())
    dirs = sorted(p for p in path.iterdir() if p.is_dir() and is_task_dir(p))
    if not dirs:
        raise UserError(f"harbor:{path}: neither a task directory nor a directory of them")
    tasks = [read_task(d, names) for d in dirs]
    unknown = names - {t.name for t in tasks}
    if unknown:
        raise UserError(f"{listed}: names no task here: {', '.join(sorted(unknown))}")
    declared = names or any(t.split == "heldout" for t in tasks)
    if not declared and len(tasks) >= RULE_MIN_TASKS:
        tasks = [t if not held_by_rule(t.name) else _with_split(t, "heldout") for t in tasks]
    return tasks


def _with_split(task: HarborTask, split: Literal["train", "heldout"]) -> HarborTask:
    return replace(task, split=split)


DOCKERFILE_FROM = re.compile(r"^\s*FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?", re.I)
DOCKERFILE_WORKDIR = re.compile(r"^\s*WORKDIR\s+(\S+)", re.I)


def dockerfile_facts(text: str) -> tuple[list[str], str]:
    """The external base images a Dockerfile names (stage aliases excluded) and its final
    ``WORKDIR`` (``/app`` when it sets none, as Harbor's tasks assume)."""
    bases: list[str] = []
    stages: set[str] = set()
    workdir = "/app"
    for line in text.splitlines():
        m = DOCKERFILE_FROM.match(line)
        if m:
            image = m.group(1)
            if image.lower() not in stages and image.lower() != "scratch":
                bases.append(image)
            if m.group(2):
                stages.add(m.group(2).lower())
            continue
        m = DOCKERFILE_WORKDIR.match(line)
        if m:
            target = m.group(1).strip("\"'")
            workdir = target if target.startswith("/") else f"{workdir.rstrip('/')}/{target}"
    return bases, workdir
