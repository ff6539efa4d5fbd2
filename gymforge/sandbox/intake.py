"""Where a caller takes in the files a job handed back (``SandboxJob.keep_files``), and the
names the sandbox keeps for itself: the one check of an agent-written file name, shared by
every environment whose agent writes files (``swe``'s repository, ``code-agent``'s
workspace), so that whatever holds those files next (the next job, a state fingerprint, a
judge) only ever sees names it can take.

Every name the sandbox itself puts in a job directory starts with ``RESERVED``: a job's
entry file under ``SandboxJob.main_file`` (``entry_file``: ``.gf-entry.py``,
``.gf-entry.c``...), the compiled program (``languages.ARTEFACT``) and a read-only job's
scratch directory (``landlock.SCRATCH``). A job whose files came through ``take_in`` and
whose ``main_file`` is ``entry_file(language)`` therefore never has a file replaced by the
sandbox's own, whatever the agent named its files (``main.py``, ``main.c``, ``prog``...).

A name is acceptable (``refusal`` is None) when it is a clean relative path (no ``.``/``..``
components, no doubled or trailing slash), valid UTF-8 without control characters, at most
``MAX_PATH`` bytes and ``MAX_DEPTH`` components of at most ``MAX_PART`` bytes each, a name
``SandboxJob`` takes as a job file, and its first component does not start with
``RESERVED``. Symlinks, fifos and devices never come back from a job (the sandbox hands back
regular files only), and the sandbox caps the count and total size of what it hands back;
a caller adds its own content rules (``swe``: text only, its repository caps).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from gymforge.sandbox.languages import get_language
from gymforge.sandbox.models import check_relpath

RESERVED = ".gf-"
MAX_PATH = 1_000
MAX_PART = 255
MAX_DEPTH = 32
SHOWN_LEFT_OUT = 10


def entry_file(language: str) -> str:
    """The reserved main-file name of a job in ``language``: ``.gf-entry`` plus the suffix of
    the language's own main file (so its compiler or runtime takes it as before)."""
    return f"{RESERVED}entry{posixpath.splitext(get_language(language).main)[1]}"


def refusal(path: str) -> str | None:
    """Why ``path`` cannot be an agent's file (None: it can)."""
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


def shown(path: str) -> str:
    """A name as a report can carry it (undecodable bytes escaped, capped)."""
    return path.encode("utf-8", "backslashreplace").decode("utf-8")[:200]


def left_out_note(left_out: Mapping[str, str]) -> str | None:
    """One line listing the files left out (the first ``SHOWN_LEFT_OUT``) with their reasons;
    None when nothing was."""
    if not left_out:
        return None
    listed = sorted(left_out.items())[:SHOWN_LEFT_OUT]
    more = len(left_out) - len(listed)
    text = "; ".join(f"{p!r} ({why})" for p, why in listed)
    return "files not kept: " + text + (f"; and {more} more" if more > 0 else "")


@dataclass
class Intake:
    """The files ``take_in`` kept, and the ones it left out (shown name -> reason)."""

    files: dict[str, bytes]
    left_out: dict[str, str] = field(default_factory=dict)

    def note(self) -> str | None:
        return left_out_note(self.left_out)


def take_in(raw: Mapping[str, bytes], ignore: Callable[[str], bool] | None = None) -> Intake:
    """Keep the files of ``raw`` (a job's ``Result.files``) whose names are acceptable;
    ``ignore`` names files to drop without a word (an interpreter's caches)."""
    out = Intake(files={})
    for path, data in raw.items():
        if ignore is not None and ignore(path):
            continue
        why = refusal(path)
        if why is None:
            out.files[path] = data
        else:
            out.left_out[shown(path)] = why
    return out
