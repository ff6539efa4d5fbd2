"""A Harbor task's image: built offline from ``environment/`` (or named pre-built), reused by
content hash, refused in one line when a base image is not on this machine.

No registry is reached: ``build`` runs with ``--pull=never`` and ``--network none`` (a
``RUN`` step that downloads fails the build). Base images are looked up locally after the
image map (``--image-map FROM=LOCAL``, part of the run's ``Settings`` as ``--sandbox`` is)
is applied; a task
whose base is missing is refused before any episode (``require_bases``). The built image is
tagged ``gymforge-harbor-NAME:HASH12``, ``HASH`` covering the environment's files and the
mapped ``FROM`` lines, so a second reset (or another run) reuses it and any change rebuilds.
"""

from __future__ import annotations

import asyncio
import hashlib
import tempfile
import weakref
from pathlib import Path

from gymforge.core.errors import InfraError, UserError
from gymforge.envs.harbor.taskdir import DOCKERFILE_FROM, HarborTask, dockerfile_facts, files_hash
from gymforge.sandbox.docker_engine import engine, engine_env, run_engine
from gymforge.verify.services import current

BUILD_OUTPUT_TAIL = 2_000


def image_map() -> dict[str, str]:
    """The run's image map (``Settings.image_map``: ``--image-map`` over
    ``$GYMFORGE_HARBOR_IMAGE_MAP``)."""
    return dict(current().settings.image_map)


def mapped_dockerfile(text: str, mapping: dict[str, str]) -> str:
    """The Dockerfile with each mapped ``FROM`` image replaced by its local image."""

    def swap(line: str) -> str:
        m = DOCKERFILE_FROM.match(line)
        if m is None or m.group(1) not in mapping:
            return line
        return line[: m.start(1)] + mapping[m.group(1)] + line[m.end(1) :]

    return "\n".join(swap(ln) for ln in text.splitlines()) + "\n"


def needed_bases(task: HarborTask) -> list[str]:
    """The local images the task needs before it can be built (after the image map)."""
    mapping = image_map()
    if task.resources.docker_image is not None:
        return [mapping.get(task.resources.docker_image, task.resources.docker_image)]
    bases, _ = dockerfile_facts(task.dockerfile.read_text(encoding="utf-8", errors="replace"))
    return [mapping.get(b, b) for b in bases]


def _exists(image: str) -> bool:
    return run_engine(engine().cli, "image", "exists", image, timeout=30).returncode == 0


def missing_base(task: HarborTask) -> str | None:
    """The one line refusing ``task`` when an image it needs is not local, else None."""
    mapping = image_map()
    reverse = {v: k for k, v in mapping.items()}
    for image in needed_bases(task):
        if not _exists(image):
            original = reverse.get(image, image)
            return (
                f"harbor task {task.name}: image {original!r} is not on this machine and "
                f"cannot be pulled offline; provide it with --image-map {original}=LOCAL_IMAGE "
                f"or build/tag it locally under that name (podman build -t {original} ...)"
            )
    return None


def require_bases(tasks: list[HarborTask]) -> None:
    """Refuse, in one line, the first task whose base image is missing."""
    for task in tasks:
        line = missing_base(task)
        if line is not None:
            raise UserError(line)


def image_tag(task: HarborTask) -> str:
    """The tag of the task's built image (or its pre-built image, mapped)."""
    mapping = image_map()
    if task.resources.docker_image is not None:
        return mapping.get(task.resources.docker_image, task.resources.docker_image)
    text = mapped_dockerfile(task.dockerfile.read_text(encoding="utf-8", errors="replace"), mapping)
    digest = hashlib.sha256(files_hash(task.dockerfile.parent).encode() + text.encode())
    return f"gymforge-harbor-{task.name.lower()}:{digest.hexdigest()[:12]}"


_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Lock]]
_locks = weakref.WeakKeyDictionary()


def _build_lock(tag: str) -> asyncio.Lock:
    """The running loop's lock for building ``tag``: the episodes of one loop wait for one
    build. One per loop, never shared: an ``asyncio.Lock`` waited on in one loop is bound
    to it, and a wait in another loop (a second ``asyncio.run`` in the process) raised
    ``RuntimeError``. Two loops that need one tag at the same moment may both build it (the
    same image, tagged twice); a loop's locks go with it."""
    return _locks.setdefault(asyncio.get_running_loop(), {}).setdefault(tag, asyncio.Lock())


async def ensure_image(task: HarborTask) -> str:
    """The task's image, built now unless an image of that tag exists; ``UserError`` when a
    base is missing, ``InfraError`` when the build fails (its output's tail attached)."""
    tag = image_tag(task)
    lock = _build_lock(tag)
    async with lock:
        if await asyncio.to_thread(_exists, tag):
            return tag
        line = await asyncio.to_thread(missing_base, task)
        if line is not None:
            raise UserError(line)
        text = task.dockerfile.read_text(encoding="utf-8", errors="replace")
        with tempfile.TemporaryDirectory(prefix="gymforge-harbor-") as tmp:
            dockerfile = Path(tmp) / "Dockerfile"
            dockerfile.write_text(mapped_dockerfile(text, image_map()), encoding="utf-8")
            argv = [
                engine().cli, "build", "--pull=never", "--network", "none", "-q",
                "-t", tag, "-f", str(dockerfile), str(task.dockerfile.parent),
            ]  # fmt: skip
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                env=engine_env(),
            )
            try:
                out, _ = await asyncio.wait_for(
                    proc.communicate(), timeout=task.resources.build_timeout_sec
                )
            except TimeoutError:
                proc.kill()
                await proc.wait()
                raise InfraError(
                    f"harbor task {task.name}: the image build passed its "
                    f"{task.resources.build_timeout_sec:.0f} s build_timeout_sec"
                ) from None
        if proc.returncode != 0:
            tail = out.decode("utf-8", "replace")[-BUILD_OUTPUT_TAIL:]
            raise UserError(
                f"harbor task {task.name}: the image build failed (offline, no network): "
                + " | ".join(ln for ln in tail.splitlines()[-4:] if ln.strip())
            )
        return tag
