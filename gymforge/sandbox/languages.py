"""The pluggable language table, and the compiled-artefact cache.

A ``Language`` says which file the source becomes, how to compile it (optional; compilers run
inside the sandbox, since they read untrusted input) and how to run it. ``kind="python"`` runs
in the forked zygote child without starting an interpreter; ``kind="exec"`` runs ``run`` by
``execve``. Templates may use ``{main}`` (the source file), ``{prog}`` (the compiled artefact),
``{out}`` (where the compiler writes it) and ``{heap_mb}`` (a heap size derived from the memory
limit, for runtimes such as V8 that reserve huge address ranges and so run without
RLIMIT_AS: ``rlimit_as=False``; a memory cgroup bounds them where one is available).

Artefacts are cached by a hash of the language, the compiler's identity and flags, and every
input file, in a host directory private to this user and **never mounted into a sandbox**: a
job that runs a cached program gets that one program, as a file in its own job directory
(``ARTEFACT``), so no job can list, open or run another job's artefact. Verdicts and run
results are never cached.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from gymforge.core.errors import ConfigError
from gymforge.settings import sandbox_cache


class ToolchainMissing(ConfigError):
    """A language's compiler or runtime is not installed where the sandbox runs."""


@dataclass(frozen=True)
class Language:
    name: str
    main: str
    kind: Literal["python", "exec"] = "exec"
    run: tuple[str, ...] = ()
    compile: tuple[str, ...] | None = None
    rlimit_as: bool = True
    version: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    min_processes: int = 1  # threads/processes the runtime itself needs (node: ~12)

    def argv(self, template: tuple[str, ...], **values: str) -> list[str]:
        out = [part.format(**values) for part in template]
        exe = shutil.which(out[0]) if not out[0].startswith("/") else out[0]
        if exe is None:
            raise ToolchainMissing(f"{self.name}: {out[0]!r} is not installed")
        return [exe, *out[1:]]


LANGUAGES: dict[str, Language] = {}


def register_language(lang: Language) -> Language:
    """Add or replace an entry of the language table."""
    LANGUAGES[lang.name] = lang
    return lang


register_language(Language("python", "main.py", kind="python", version=("python3", "--version")))
register_language(
    Language(
        "c",
        "main.c",
        run=("{prog}",),
        compile=("gcc", "-O2", "-pipe", "-std=gnu17", "-o", "{out}", "{main}", "-lm"),
        version=("gcc", "-dumpfullversion"),
    )
)
register_language(
    Language(
        "cpp",
        "main.cpp",
        run=("{prog}",),
        compile=("g++", "-O2", "-pipe", "-std=gnu++17", "-o", "{out}", "{main}"),
        version=("g++", "-dumpfullversion"),
    )
)
register_language(
    Language(
        "javascript",
        "main.js",
        run=("node", "--max-old-space-size={heap_mb}", "--max-semi-space-size=16", "{main}"),
        rlimit_as=False,
        version=("node", "--version"),
        min_processes=16,
    )
)


def get_language(name: str) -> Language:
    try:
        return LANGUAGES[name]
    except KeyError:
        raise ConfigError(f"unknown language {name!r}; known: {sorted(LANGUAGES)}") from None


_VERSIONS: dict[tuple[str, ...], str] = {}


def tool_version(cmd: tuple[str, ...]) -> str:
    """First line of ``cmd``'s output (cached per process); ``""`` when it cannot run."""
    if not cmd:
        return ""
    if cmd not in _VERSIONS:
        try:
            p = subprocess.run(list(cmd), capture_output=True, text=True, timeout=10, check=False)
            text = (p.stdout or p.stderr).strip()
            _VERSIONS[cmd] = text.splitlines()[0] if text else ""
        except (OSError, subprocess.TimeoutExpired):
            _VERSIONS[cmd] = ""
    return _VERSIONS[cmd]


# the compiled program's name in the job directory (compile and run): under the sandbox's
# reserved ``.gf-`` prefix (``intake.RESERVED``), so no kept workspace file is ever replaced by it
ARTEFACT = ".gf-prog"


def default_cache_dir() -> Path:
    """The host directory of compiled artefacts (only this user's processes read it)."""
    env = sandbox_cache()
    if env:
        return Path(env)
    return Path("/var/tmp") / f"gymforge-sandbox-cache-{os.getuid()}"


class ArtefactCache:
    """Compiled programs keyed by content hash: ``<root>/<k[:2]>/<k>/prog``.

    The root is ``0700`` (the sandbox uids need no access: artefacts travel to a job as bytes
    of its request), entries ``0600``. Writes go through a temporary file and an atomic
    rename, so concurrent writers of the same key are harmless. The root must be owned by us
    and not writable by others.
    """

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root or default_cache_dir())
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        st = self.root.stat()
        if st.st_uid != os.getuid() or st.st_mode & 0o022:
            raise ConfigError(f"cache dir {self.root} must be ours and not group/world-writable")
        os.chmod(self.root, 0o700)  # caches made before artefacts became private were 0755

    @staticmethod
    def key(lang: Language, argv_template: tuple[str, ...], files: dict[str, bytes]) -> str:
        h = hashlib.sha256()
        for part in (lang.name, tool_version(lang.version), "\0".join(argv_template)):
            h.update(part.encode() + b"\0")
        for name in sorted(files):
            h.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
        return h.hexdigest()

    def relpath(self, key: str) -> str:
        return f"{key[:2]}/{key}/prog"

    def get(self, key: str) -> bytes | None:
        """The artefact's bytes, or ``None`` on a miss."""
        try:
            return (self.root / self.relpath(key)).read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None

    def put(self, key: str, data: bytes) -> Path:
        path = self.root / self.relpath(key)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path
