"""What a ``harness-cmd:`` process sees: its :class:`~gymforge.sandbox.confine.Confinement`.

- **Files.** The system directories; the interpreter tree of the command's program (a
  virtualenv and the Python it was made from, or the install prefix of a program outside
  ``/usr``); each existing path the command line names (a file as that file, a directory as
  that directory; relative names against the runner's working directory); the paths the user
  grants (``--harness-path``). All read-only, at the same place. Its episode directory,
  writable, at ``/episode`` (its home and the place of ``prompt.json``); a private ``/tmp``.
  Hidden even inside a granted path: the runner's gymforge package, any ``gymforge``
  package or editable-install hook in a bound ``site-packages``, and the run's output
  directory. It runs in the runner's working directory (as a read-only path: relative names
  work, nothing else of it is there unless granted).
- **Environment.** ``PATH``, ``LANG``, ``LC_ALL`` (the runner's values), ``HOME=/episode``,
  and the episode's endpoint variables; nothing else (no ``GYMFORGE_SEAL_KEY``, no API key,
  no ``PYTHONPATH``).
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Iterable
from pathlib import Path

from gymforge import version as gymforge_version
from gymforge.sandbox.confine import DEFAULT_UID, Confinement
from gymforge.settings import inherited_environ

EPISODE_DIR = "/episode"
PASSED_ENV = ("PATH", "LANG", "LC_ALL")
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"


def harness_confinement(
    command: str,
    episode_dir: Path,
    endpoint_env: dict[str, str],
    *,
    granted: Iterable[str] = (),
    hidden: Iterable[str] = (),
    uid: int = DEFAULT_UID,
) -> Confinement:
    """The confinement of one episode's harness (module docstring). ``episode_dir``: the
    host directory bound writable at ``/episode``; ``endpoint_env``: the episode's own
    variables (URLs, token, model, prompt file)."""
    cwd = os.getcwd()
    mine = inherited_environ()
    env = {k: mine[k] for k in PASSED_ENV if mine.get(k)}
    env.setdefault("PATH", DEFAULT_PATH)
    env |= {"HOME": EPISODE_DIR, **endpoint_env}
    read_only = [*named_paths(command, cwd, env["PATH"]), *(os.path.abspath(p) for p in granted)]
    return Confinement(
        env=env,
        chdir=cwd,
        read_only=tuple(read_only),
        writable=((str(episode_dir), EPISODE_DIR),),
        hidden=tuple([*gymforge_paths(read_only), *(os.path.abspath(h) for h in hidden)]),
        uid=uid,
    )


def named_paths(command: str, cwd: str, path_env: str) -> list[str]:
    """The host paths ``command`` needs: its program's interpreter tree and every existing
    path its words name."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    out: list[str] = []
    if words:
        exe = shutil.which(words[0], path=path_env) if "/" not in words[0] else words[0]
        if exe:
            out += interpreter_tree(os.path.join(cwd, exe))
    for word in words:
        for candidate in {word, word.split("=", 1)[-1]}:  # --flag=PATH names PATH
            p = os.path.normpath(os.path.join(cwd, candidate))
            if candidate and os.path.exists(p) and p != "/":
                out.append(p)
    return out


def interpreter_tree(exe: str) -> list[str]:
    """Where the program ``exe`` lives, outside ``/usr``: a virtualenv's root and the Python
    it was made from, or the install prefix (``prefix/bin/exe``)."""
    out: list[str] = []
    venv = Path(exe).parent.parent
    cfg = venv / "pyvenv.cfg"
    if cfg.is_file():
        out.append(str(venv))
        for line in cfg.read_text(errors="replace").splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home" and value.strip():
                out.append(str(Path(value.strip()).parent))
    real = Path(os.path.realpath(exe)).parent.parent
    out.append(str(real))
    return [p for p in out if not _system(p)]


def gymforge_paths(roots: Iterable[str]) -> list[str]:
    """What would let the harness import gymforge: the runner's own package, and in each
    bound tree a ``site-packages/gymforge`` and the hooks of an editable install."""
    out = [str(Path(gymforge_version.__file__).resolve().parent)]  # the package's one directory
    for root in roots:
        if os.path.isdir(root):
            for sp in Path(root).glob("lib/python3*/site-packages"):
                out += [str(sp / "gymforge"), *map(str, sp.glob("__editable__*gymforge*"))]
    return out


def _system(path: str) -> bool:
    return path in ("/", "/usr") or path.startswith(("/usr/", "/etc/"))
