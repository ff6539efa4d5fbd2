"""User task files for ``swe``: JSONL rows naming a repository snapshot and its tests.

One row::

    {"task_id": "acme-12", "repo": "repos/acme.tar.gz", "title": "parse() drops the last field",
     "issue": "Calling parse('a,b') gives ['a'] ...", "visible_command": "python -m unittest",
     "hidden_command": "python -m unittest discover -s hidden", "hidden_tests": "hidden/acme-12",
     "protected": ["tests/**", "setup.cfg"], "solution": "repos/acme-fixed"}

``repo``, ``hidden_tests`` (files laid over the repository only for the hidden run) and
``solution`` (the fixed repository: the oracle's edits) are tarballs (``.tar``, ``.tar.gz``,
``.tgz``) or directories, relative to the task file. A tarball whose files all sit under one
top directory is read from inside it. Text files only (UTF-8); ``.git`` and ``__pycache__``
are skipped; a name the workspace could not hold (``intake.refusal``: the sandbox's reserved
``.gf-`` names, control characters...) is an error of the row. ``protected`` defaults to the
generated repositories' list.

**Pinned whole.** The dataset's hash is the SHA-256 over the JSONL's own hash and, for every
repository it references, the tarball's bytes' hash or the directory's file tree's hash
(each file's path and content): change one file of a referenced directory and the pin, and
every task id built from it, changes. A row whose repository cannot be read is one error line
(file and line); the other rows load.
"""

from __future__ import annotations

import hashlib
import io
import json
import posixpath
import tarfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from gymforge.envs.swe.edits import edits_between
from gymforge.envs.swe.intake import MAX_FILE_CHARS, MAX_FILES
from gymforge.envs.swe.repogen import PROTECTED
from gymforge.envs.swe.truth import Issue, SweTruth
from gymforge.sandbox.intake import refusal
from gymforge.tasks import Dataset
from gymforge.tasks.dataset import load_jsonl

SKIP_DIRS = (".git", "__pycache__")


class SweRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str | None = Field(default=None, min_length=1, max_length=500)
    repo: str = Field(min_length=1)
    issue: str = Field(min_length=1)
    title: str = ""
    visible_command: str = Field(min_length=1)
    hidden_command: str = Field(min_length=1)
    hidden_tests: str | None = None
    protected: list[str] = Field(default_factory=lambda: list(PROTECTED))
    solution: str | None = None
    split: str | None = None


Tree = dict[str, str]


def _clean(name: str) -> str | None:
    n = posixpath.normpath(name.removeprefix("./"))
    if n in (".", "") or n.startswith("..") or name.startswith("/"):
        raise ValueError(f"unsafe path in snapshot: {name!r}")
    if any(part in SKIP_DIRS for part in n.split("/")):
        return None
    return n


def _decoded(name: str, data: bytes) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{name} is not UTF-8 text (snapshots hold text files only)") from None
    if len(text) > MAX_FILE_CHARS:
        raise ValueError(f"{name} is longer than {MAX_FILE_CHARS} characters")
    return text


def _strip_top(files: Tree) -> Tree:
    tops = {p.split("/", 1)[0] for p in files}
    if len(tops) == 1 and all("/" in p for p in files):
        return {p.split("/", 1)[1]: t for p, t in files.items()}
    return files


def read_snapshot(path: Path) -> tuple[str, Tree]:
    """(hash, files) of a tarball or a directory. ValueError says what is wrong."""
    if path.is_dir():
        files: Tree = {}
        h = hashlib.sha256()
        for f in sorted(path.rglob("*")):
            rel = f.relative_to(path).as_posix()
            if f.is_symlink():
                raise ValueError(f"{rel}: links are not supported in a snapshot")
            if not f.is_file() or _clean(rel) is None:
                continue
            data = f.read_bytes()
            h.update(f"{rel}\0{hashlib.sha256(data).hexdigest()}\n".encode())
            files[rel] = _decoded(rel, data)
        return "dir:" + h.hexdigest(), _capped(path, files)
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise ValueError(f"cannot read {path.name}: {err.strerror or err}") from None
    try:
        with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
            files = {}
            for m in tar.getmembers():
                if m.issym() or m.islnk():
                    raise ValueError(f"{m.name}: links are not supported in a snapshot")
                name = _clean(m.name)
                if not m.isfile() or name is None:
                    continue
                fh = tar.extractfile(m)
                files[name] = _decoded(name, fh.read() if fh else b"")
    except tarfile.TarError as err:
        raise ValueError(f"{path.name} is not a readable tarball or directory ({err})") from None
    return "tar:" + hashlib.sha256(raw).hexdigest(), _capped(path, _strip_top(files))


def _capped(path: Path, files: Tree) -> Tree:
    if not files:
        raise ValueError(f"{path.name}: no files")
    if len(files) > MAX_FILES:
        raise ValueError(f"{path.name}: {len(files)} files; a repository holds at most {MAX_FILES}")
    for name in files:
        if (why := refusal(name)) is not None:
            raise ValueError(f"{path.name}: {name!r} cannot be a repository file: {why}")
    return dict(sorted(files.items()))


def load_task_file(path: str | Path, name: str | None = None) -> Dataset:
    p = Path(path)
    base = p.parent
    snapshots: dict[str, tuple[str, Tree] | str] = {}  # ref -> (hash, files) or the error

    def pin(data: bytes) -> str:
        refs: set[str] = set()
        for line in data.splitlines():
            try:
                row = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
                continue
            if isinstance(row, dict):
                refs |= {
                    v
                    for k in ("repo", "hidden_tests", "solution")
                    if isinstance(v := row.get(k), str)
                }
        h = hashlib.sha256(hashlib.sha256(data).digest())
        for ref in sorted(refs):
            try:
                snapshots[ref] = read_snapshot(base / ref)
                h.update(f"{ref}\0{snapshots[ref][0]}\n".encode())
            except (ValueError, OSError) as err:
                snapshots[ref] = str(err)
                h.update(f"{ref}\0missing\n".encode())
        return h.hexdigest()

    def files_of(ref: str, what: str) -> Tree:
        got = snapshots.get(ref)
        if isinstance(got, tuple):
            return got[1]
        raise ValueError(f"{what} {ref!r}: {got or 'not found'}")

    def to_task(row: BaseModel) -> tuple[str, SweTruth]:
        assert isinstance(row, SweRow)
        files = files_of(row.repo, "repo")
        hidden = files_of(row.hidden_tests, "hidden_tests") if row.hidden_tests else {}
        fixed = files_of(row.solution, "solution") if row.solution else None
        title = row.title or row.issue.strip().splitlines()[0][:120]
        truth = SweTruth(
            files=files,
            issues=[Issue(number=1, title=title, body=row.issue)],
            target_issue=1,
            protected=row.protected,
            fix=edits_between(files, fixed) if fixed is not None else [],
            mode="command",
            visible_command=row.visible_command,
            hidden_command=row.hidden_command,
            hidden_files=hidden,
        )
        prompt = (
            "You are working in a checkout of a repository. Resolve issue #1 of its tracker: "
            "read it with `read_issue`, change the code with the editor tools, check your work "
            "with `run_tests` (which runs `" + row.visible_command + "`), then call `submit`. "
            "Do not change these protected files: " + ", ".join(row.protected) + ". Hidden "
            "tests judge the final repository."
        )
        return prompt, truth

    return load_jsonl(p, name=name, row_model=SweRow, to_task=to_task, strict=False, pin=pin)
