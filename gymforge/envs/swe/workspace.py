"""The episode's repository (``Repo``) and the editor operations on it, in this process.

The workspace is a dict of text files: a reset copies the task's template dict (the file
texts are shared, immutable strings), which costs microseconds whatever the repository's
size. Every operation checks its path (``intake.refusal``: a clean relative name the sandbox
can take, none of its reserved ones) and the caps below, and fails with a ``ToolError`` a
model can act on.
"""

from __future__ import annotations

import difflib
import fnmatch
import posixpath
import re

from pydantic import BaseModel

from gymforge.core.errors import ToolError
from gymforge.envs.swe.intake import MAX_FILE_CHARS, MAX_FILES, MAX_REPO_CHARS
from gymforge.envs.swe.truth import Issue
from gymforge.sandbox.intake import refusal

SHOWN_CHARS = 8_000
MAX_MATCHES = 100
MAX_PATTERN = 500


class Repo(BaseModel):
    files: dict[str, str]
    issues: list[Issue]
    test_runs: int = 0
    commands: int = 0
    comments: int = 0
    submitted: bool = False


def clip(text: str, limit: int = SHOWN_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n... [{len(text) - limit} more characters not shown]"


def checked_path(path: str) -> str:
    p = path.strip()
    norm = posixpath.normpath(p) if p else ""
    if not p or p.startswith("/") or norm == ".." or norm.startswith("../") or norm == ".":
        raise ToolError("invalid_arguments", f"path must be relative to the repository: {path!r}")
    why = refusal(norm)
    if why is not None:
        raise ToolError("invalid_arguments", f"{path!r} cannot be a repository file: {why}")
    return norm


def existing(repo: Repo, path: str) -> str:
    p = checked_path(path)
    if p not in repo.files:
        near = difflib.get_close_matches(p, list(repo.files), n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        raise ToolError("not_found", f"no file {p!r} in the repository{hint}")
    return p


def check_size(repo: Repo, path: str, text: str) -> None:
    if len(text) > MAX_FILE_CHARS:
        raise ToolError("invalid_arguments", f"{path}: longer than {MAX_FILE_CHARS} characters")
    total = sum(len(v) for k, v in repo.files.items() if k != path) + len(text)
    if total > MAX_REPO_CHARS:
        raise ToolError(
            "invalid_arguments", f"the repository would exceed {MAX_REPO_CHARS} characters"
        )


def list_files(repo: Repo, path: str = "") -> list[dict[str, int | str]]:
    prefix = checked_path(path).rstrip("/") + "/" if path.strip() else ""
    found: list[dict[str, int | str]] = [
        {"path": p, "lines": len(text.splitlines())}
        for p, text in sorted(repo.files.items())
        if p.startswith(prefix)
    ]
    if prefix and not found:
        raise ToolError("not_found", f"no files under {path!r}")
    return found


def read_file(repo: Repo, path: str, start: int = 1, end: int = 0) -> str:
    p = existing(repo, path)
    lines = repo.files[p].splitlines()
    if start < 1 or (end and end < start):
        raise ToolError("invalid_arguments", "need 1 <= start and (end == 0 or end >= start)")
    if lines and start > len(lines):
        raise ToolError("invalid_arguments", f"{p} has {len(lines)} lines; start={start}")
    stop = len(lines) if end == 0 else min(end, len(lines))
    numbered = "\n".join(f"{i:>5} | {lines[i - 1]}" for i in range(start, stop + 1))
    return clip(f"{p} (lines {start}-{stop} of {len(lines)})\n{numbered}")


def search(repo: Repo, pattern: str, path_glob: str = "*") -> list[dict[str, int | str]]:
    if not pattern or len(pattern) > MAX_PATTERN:
        raise ToolError("invalid_arguments", f"pattern must have 1 to {MAX_PATTERN} characters")
    try:
        rx = re.compile(pattern)
    except re.error as err:
        raise ToolError("invalid_arguments", f"bad regular expression: {err}") from None
    out: list[dict[str, int | str]] = []
    for p, text in sorted(repo.files.items()):
        if not fnmatch.fnmatch(p, path_glob or "*"):
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if rx.search(line[:2000]):
                out.append({"path": p, "line": n, "text": line[:300]})
                if len(out) >= MAX_MATCHES:
                    return out
    return out


def edit_file(repo: Repo, path: str, old: str, new: str) -> int:
    """Replace the one occurrence of ``old``; the line the edit starts on."""
    p = existing(repo, path)
    text = repo.files[p]
    if not old:
        raise ToolError("invalid_arguments", "old text is empty; use create_file for new files")
    n = text.count(old)
    if n == 0:
        first = old.strip().splitlines()[0] if old.strip() else old
        near = difflib.get_close_matches(first, text.splitlines(), n=1, cutoff=0.6)
        hint = f" The closest line is {near[0].strip()!r}." if near else ""
        raise ToolError(
            "invalid_arguments",
            f"old text not found in {p} (it must match exactly, whitespace included).{hint}",
        )
    if n > 1:
        raise ToolError(
            "invalid_arguments",
            f"old text occurs {n} times in {p}; include more surrounding lines to make it unique",
        )
    updated = text.replace(old, new, 1)
    check_size(repo, p, updated)
    repo.files[p] = updated
    return text[: text.index(old)].count("\n") + 1


def create_file(repo: Repo, path: str, content: str) -> str:
    p = checked_path(path)
    if p in repo.files:
        raise ToolError("conflict", f"{p} already exists; use edit_file to change it")
    if any(f.startswith(p + "/") for f in repo.files) or any(
        p.startswith(f + "/") for f in repo.files
    ):
        raise ToolError("conflict", f"{p} clashes with a directory or file of that name")
    if len(repo.files) >= MAX_FILES:
        raise ToolError("invalid_arguments", f"the repository holds at most {MAX_FILES} files")
    check_size(repo, p, content)
    repo.files[p] = content
    return p


def delete_file(repo: Repo, path: str) -> str:
    p = existing(repo, path)
    del repo.files[p]
    return p


def is_protected(path: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(path, g) for g in patterns)


def protected_changes(
    before: dict[str, str], after: dict[str, str], patterns: list[str]
) -> list[str]:
    """Protected paths created, deleted or changed."""
    paths = before.keys() | after.keys()
    return sorted(p for p in paths if is_protected(p, patterns) and before.get(p) != after.get(p))


def diff_lines(before: dict[str, str], after: dict[str, str]) -> tuple[int, int]:
    """(lines added + removed, files changed) between two repositories."""
    lines = files = 0
    for p in before.keys() | after.keys():
        a, b = before.get(p), after.get(p)
        if a == b:
            continue
        files += 1
        diff = difflib.unified_diff((a or "").splitlines(), (b or "").splitlines(), n=0)
        lines += sum(1 for d in diff if d[:1] in "+-" and d[:3] not in ("+++", "---"))
    return lines, files
