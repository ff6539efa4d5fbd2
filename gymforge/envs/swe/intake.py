"""Where agent-written files enter the ``swe`` workspace, so that everything downstream (the
next sandbox job, the judge) only ever sees files it can take.

The agent writes files two ways: the editor tools (one path each: ``refusal`` decides, the
tool fails with a message the model can act on) and ``run_command`` (the job hands back the
whole job directory: ``take_in`` keeps what is acceptable and says what it left out). Names
are checked by the sandbox's one rule for agent-written files (``gymforge.sandbox.intake``,
which ``code-agent`` shares): a clean relative UTF-8 path without control characters, not
too long or deep, none of the sandbox's reserved ``.gf-`` names. On top of it the
repository holds text only (binary files are left out), each file at most
``MAX_FILE_CHARS``; a command whose files would break the repository's caps (count, total
size) changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gymforge.sandbox import intake

MAX_FILES = 200
MAX_FILE_CHARS = 200_000
MAX_REPO_CHARS = 2_000_000


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
        return intake.left_out_note(self.left_out)


def take_in(before: dict[str, str], raw: dict[str, bytes]) -> TakenIn:
    """The workspace after a command that left the job directory holding ``raw``."""
    named = intake.take_in(raw, ignore=skipped)
    files: dict[str, str] = {}
    left_out = dict(named.left_out)
    for p, data in named.files.items():
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            left_out[intake.shown(p)] = "binary: text files only"
            continue
        if len(text) > MAX_FILE_CHARS:
            left_out[intake.shown(p)] = f"longer than {MAX_FILE_CHARS} characters"
        else:
            files[p] = text
    if len(files) > MAX_FILES or sum(map(len, files.values())) > MAX_REPO_CHARS:
        cap = f"the repository would exceed {MAX_FILES} files or {MAX_REPO_CHARS} characters"
        return TakenIn(files=before, changed=[], left_out={"": cap}, kept=False)
    changed = sorted(p for p in before.keys() | files.keys() if before.get(p) != files.get(p))
    return TakenIn(files=files, changed=changed, left_out=left_out)
