"""Private on-disk copies of SQL fixtures that were given as bytes.

Why not SQLite's ``memdb``: a connection opened through the ``memdb`` VFS also creates its
*temporary* files there (the sorter's spill for ``ORDER BY``, ``GROUP BY``, ``DISTINCT`` and
the ephemeral b-trees), as growable heap buffers of up to 1 GB each, whatever ``PRAGMA
temp_store`` says. One query sorting wide computed keys over a cross join then held about
1 GB of the judge's heap within its step budget
(``tests/redteam/test_sql_sort_memory.py``). A database opened from a file through the
default VFS spills to unlinked temporary files instead, and keeps only its page caches
(``cache_size``) in memory.

Contract (``write_private_copy(data)``): ``data`` is loaded as a SQLite database
(``sqlite3.DatabaseError`` if it is not one: nothing is written) and saved to a new file,
mode ``0400``, in a directory private to this process (mode ``0700``, created on first use,
removed at exit). The returned ``PrivateFile`` deletes the file on ``close()``; a process
forked after the copy was made never deletes it (the parent owns it). The file is opened
by the judge with ``mode=ro&immutable=1``: nothing ever writes it after this function
returns.
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import sqlite3
import tempfile
import threading
from pathlib import Path

_lock = threading.Lock()
_dirs: dict[int, Path] = {}
"""This process's private directory, by the process id that created it (a forked child
makes its own and never removes its parent's)."""
_names = itertools.count()


class PrivateFile:
    """A fixture's file; ``close()`` deletes it (only in the process that wrote it)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._owner = os.getpid()

    def close(self) -> None:
        if os.getpid() == self._owner:
            self.path.unlink(missing_ok=True)


def _private_dir() -> Path:
    pid = os.getpid()
    with _lock:
        if pid not in _dirs:
            _dirs[pid] = Path(tempfile.mkdtemp(prefix="gymforge-sql-"))  # mode 0700
            atexit.register(_remove, pid)
        return _dirs[pid]


def _remove(pid: int) -> None:
    if os.getpid() == pid and pid in _dirs:
        shutil.rmtree(_dirs.pop(pid), ignore_errors=True)


def write_private_copy(data: bytes) -> PrivateFile:
    """``data`` (a serialized SQLite database) saved as a new read-only private file."""
    loader = sqlite3.connect(":memory:")
    try:
        loader.deserialize(data)
        loader.execute("SELECT count(*) FROM sqlite_schema").fetchone()  # not a database: raises
        path = _private_dir() / f"fixture-{next(_names)}.sqlite"
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        copy = PrivateFile(path)
        try:
            target = sqlite3.connect(path)
            try:
                target.execute("PRAGMA journal_mode=OFF")
                target.execute("PRAGMA synchronous=OFF")
                loader.backup(target)
            finally:
                target.close()
            path.chmod(0o400)
        except BaseException:
            copy.close()
            raise
        return copy
    finally:
        loader.close()
