"""The job directory, from the zygote's side: writing a job's files, handing them back
(``keep_files``) and wiping the directory between jobs. Standard library only (copied into
the sandbox next to ``zygote.py``); nothing here runs in a job process.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gymforge.sandbox import wire
else:
    import wire


def safe_path(root: str, rel: str) -> str:
    """``rel`` under ``root``; ValueError for an empty, absolute or escaping path."""
    path = os.path.normpath(os.path.join(root, rel))
    if not rel or os.path.isabs(rel) or not path.startswith(root.rstrip("/") + "/"):
        raise ValueError(f"bad path {rel!r}")
    return path


def write_files(jobdir: str, hdr: dict[str, Any], blobs: list[bytes]) -> None:
    """Create the request's files (``hdr["files"]``: name and mode; ``file_blobs``: their
    contents), each new (``O_EXCL``), below ``jobdir``."""
    for (name, mode), idx in zip(hdr.get("files", []), hdr.get("file_blobs", []), strict=True):
        path = safe_path(jobdir, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            wire.write_all(fd, blobs[idx])
        finally:
            os.close(fd)


def keep_files(jobdir: str, spec: dict[str, Any], out: list[bytes]) -> tuple[list[Any], bool]:
    """Append the job directory's regular files to ``out`` (every job process is dead by
    now, so nothing changes under us): ``[[relpath, blob index]...]``, and whether caps
    left some out. Symlinks, fifos and devices are never followed or read."""
    budget, max_files = int(spec["max_bytes"]), int(spec["max_files"])
    skip = set(spec.get("skip") or [])
    kept: list[Any] = []
    truncated = False
    scanned = 0
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        try:
            entries = sorted(os.scandir(os.path.join(jobdir, rel_dir)), key=_name)
        except OSError:
            truncated = True
            continue
        for entry in entries:
            scanned += 1
            if scanned > 16 * max_files:
                return kept, True
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if entry.is_dir(follow_symlinks=False):
                stack.append(rel)
                continue
            if rel in skip or not entry.is_file(follow_symlinks=False):
                continue
            try:
                size = entry.stat(follow_symlinks=False).st_size
                if len(kept) >= max_files or size > budget:
                    truncated = True
                    continue
                os.chmod(entry.path, 0o600)
                fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
                try:
                    data = os.read(fd, size + 1) if size else b""
                finally:
                    os.close(fd)
            except OSError:
                truncated = True
                continue
            if len(data) > budget:
                truncated = True
                continue
            budget -= len(data)
            kept.append([rel, len(out)])
            out.append(data)
    return kept, truncated


def _name(entry: os.DirEntry[str]) -> str:
    return entry.name


def wipe(root: str) -> None:
    """Delete everything below ``root`` (not ``root`` itself), iteratively (a job may nest
    directories thousands deep), fixing permissions on the way: everything there belongs to
    the zygote's uid, so ``chmod`` always works."""
    stack = [(root, False)]
    while stack:
        path, visited = stack.pop()
        if visited:
            os.rmdir(path)
            continue
        if path != root:
            stack.append((path, True))
        for entry in os.scandir(path):
            if entry.is_dir(follow_symlinks=False):
                os.chmod(entry.path, 0o700)
                stack.append((entry.path, False))
            else:
                os.unlink(entry.path)
