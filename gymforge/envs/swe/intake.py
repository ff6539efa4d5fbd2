"""Where agent-written files enter the ``swe`` workspace: the one place their names and sizes
are checked, so that everything downstream (the next sandbox job, the judge) only ever sees
files it can take.

The agent writes files two ways: the editor tools (one path each: ``refusal`` decides, the
tool fails with a message the model can act on) and ``run_command`` (the job hands back the
whole job directory: ``take_in`` keeps what is acceptable and says what it left out). A name
is acceptable when it is a clean relative path (no ``.``/``..`` components, no doubled or
trailing slash, no control characters, valid UTF-8, at most ``MAX_PATH`` bytes and
``MAX_DEPTH`` components), the sandbox takes it as a job file, and its first component does
not start with ``RESERVED`` (the sandbox's own names in a job directory: the scratch
directory of a read-only job, the entry program). Symlinks, fifos and devices never come
back from a job (the sandbox hands back regular files only); binary files are left out (the
workspace holds text). A command whose files would break the repository's caps (count,
total size) changes nothing.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from gymforge.sandbox.models import check_relpath

RESERVED = ".gf-"
MAX_PATH = 1_000
MAX_PART = 255
MAX_DEPTH = 32
MAX_FILES = 200
MAX_FILE_CHARS = 200_000
MAX_REPO_CHARS = 2_000_000


def refusal(path: str) -> str | None:
    """Why ``path`` cannot be a workspace file (None: it can)."""
    if not isinstance(path, str) or not path:
        return "an empty name"
    try:
        raw = path.encode("utf-8")
    except UnicodeEncodeError:
        return "not valid UTF-8"
    if any(ord(c) < 32 or ord(c) == 127 for c in path):
        return "a control character in the name"
    if len(raw) > MAX_PATH:
        return f"a name longer than {MAX_PATH} bytes"
    parts = path.split("/")
    if path.startswith("/") or any(p in ("", ".", "..") for p in parts):
        return "not a clean relative path"
    if len(parts) > MAX_DEPTH or any(len(p.encode()) > MAX_PART for p in parts):
        return f"more than {MAX_DEPTH} directories deep, or a part over {MAX_PART} bytes"
    if parts[0].startswith(RESERVED):
        return f"names starting with {RESERVED!r} are reserved for the sandbox"
    try:
        check_relpath(path)
    except ValueError:
        return "a name the sandbox refuses"
    if posixpath.normpath(path) != path:
        return "not a clean relative path"
    return None


def skipped(path: str) -> bool:
    """Interpreter caches: never part of the repository, never reported."""
    return "__pycache__" in path.split("/") or path.endswith(".pyc")


@dataclass
class TakenIn:
    """What ``take_in`` kept, and what it left out with the reason."""

    files: dict[str, str]
    changed: list[str]
    left_out: dict[str, str] = field(default_factory=dict)
    kept: bool = True  # False: the caps were broken; nothing changed

    def note(self) -> str | None:
        if not self.kept:
            return "the command's file changes were not kept: " + next(iter(self.left_out.values()))
        if not self.left_out:
            return None
        shown = sorted(self.left_out.items())[:10]
        more = len(self.left_out) - len(shown)
        listed = "; ".join(f"{p!r} ({why})" for p, why in shown)
        return "files not kept: " + listed + (f"; and {more} more" if more > 0 else "")


def take_in(before: dict[str, str], raw: dict[str, bytes]) -> TakenIn:
    """The workspace after a command that left the job directory holding ``raw``."""
    files: dict[str, str] = {}
    left_out: dict[str, str] = {}
    for p, data in raw.items():
        if skipped(p):
            continue
        why = refusal(p)
        if why is None:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                why = "binary: text files only"
            else:
                if len(text) > MAX_FILE_CHARS:
                    why = f"longer than {MAX_FILE_CHARS} characters"
                else:
                    files[p] = text
        if why is not None:
            left_out[_shown(p)] = why
    if len(files) > MAX_FILES or sum(map(len, files.values())) > MAX_REPO_CHARS:
        cap = f"the repository would exceed {MAX_FILES} files or {MAX_REPO_CHARS} characters"
        return TakenIn(files=before, changed=[], left_out={"": cap}, kept=False)
    changed = sorted(p for p in before.keys() | files.keys() if before.get(p) != files.get(p))
    return TakenIn(files=files, changed=changed, left_out=left_out)


def _shown(path: str) -> str:
    """A name as reports can carry it (undecodable bytes escaped, capped)."""
    return path.encode("utf-8", "backslashreplace").decode("utf-8")[:200]
