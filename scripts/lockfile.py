#!/usr/bin/env python3
"""The lock file's bookkeeping, for scripts/setup.sh and scripts/lock.sh (stdlib only, so
it runs on the system python3 before any virtual environment exists).

  lockfile.py digest               the digest of pyproject.toml's locked dependency lists
  lockfile.py check                exit 1, saying what to run, if requirements.lock was made
                                   from other dependency lists than pyproject.toml's now
  lockfile.py write REPORT         write requirements.lock from a `pip install --report` file
  lockfile.py wait-apt SECONDS     wait (bounded) until no apt/dpkg process holds its locks

The digest covers ``requires-python``, ``dependencies`` and the ``dev`` extra: what
``make test`` installs. Any other change to pyproject.toml leaves the lock valid.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements.lock"
PYPROJECT = ROOT / "pyproject.toml"
LOCKED_EXTRA = "dev"
DIGEST_PREFIX = "# pyproject-digest: "
REFRESH = "scripts/lock.sh (or: make lock)"
APT_LOCKS = (
    "/var/lib/dpkg/lock-frontend",
    "/var/lib/dpkg/lock",
    "/var/lib/apt/lists/lock",
    "/var/cache/apt/archives/lock",
)


def digest(pyproject: Path = PYPROJECT) -> str:
    """SHA-256 of the dependency lists the lock pins (order and spacing do not count)."""
    project = tomllib.loads(pyproject.read_text())["project"]
    locked = {
        "requires-python": project.get("requires-python"),
        "dependencies": sorted(d.replace(" ", "") for d in project.get("dependencies", [])),
        LOCKED_EXTRA: sorted(
            d.replace(" ", "")
            for d in project.get("optional-dependencies", {}).get(LOCKED_EXTRA, [])
        ),
    }
    return hashlib.sha256(json.dumps(locked, sort_keys=True).encode()).hexdigest()


def recorded(lock: Path = LOCK) -> str | None:
    if not lock.exists():
        return None
    for line in lock.read_text().splitlines():
        if line.startswith(DIGEST_PREFIX):
            return line[len(DIGEST_PREFIX) :].strip()
    return None


def check(pyproject: Path = PYPROJECT, lock: Path = LOCK) -> str | None:
    """Why the lock does not match pyproject.toml, or None when it does."""
    was = recorded(lock)
    if was is None:
        return f"{lock.name} is missing or has no '{DIGEST_PREFIX.strip()}' line; run {REFRESH}"
    if was != digest(pyproject):
        return (
            f"{lock.name} is stale: the dependencies in {pyproject.name} changed since it was "
            f"made. Run {REFRESH} and commit {lock.name}"
        )
    return None


def write(report: Path, pyproject: Path = PYPROJECT, lock: Path = LOCK) -> int:
    """Write the lock from pip's installation report (every distribution but gymforge)."""
    data = json.loads(report.read_text())
    pins = sorted(
        (item["metadata"]["name"], item["metadata"]["version"])
        for item in data["install"]
        if item["metadata"]["name"].lower() != "gymforge"
    )
    lines = [
        "# Exact versions of gymforge's core and dev dependencies: what `make test` installs.",
        f"# Made by {REFRESH} from pyproject.toml; scripts/setup.sh refuses a stale one.",
        f"{DIGEST_PREFIX}{digest(pyproject)}",
        *(f"{name}=={version}" for name, version in pins),
    ]
    lock.write_text("\n".join(lines) + "\n")
    return len(pins)


def _held(path: str) -> bool:
    try:
        with open(path, "w") as fh:
            fcntl.lockf(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return False


def wait_apt(seconds: float, locks: tuple[str, ...] = APT_LOCKS) -> str | None:
    """Wait until none of ``locks`` is held (dpkg and apt take fcntl locks); None when free,
    else the lock still held after ``seconds``."""
    deadline = time.monotonic() + seconds
    said = False
    while True:
        busy = next((p for p in locks if Path(p).exists() and _held(p)), None)
        if busy is None:
            return None
        if time.monotonic() >= deadline:
            return busy
        if not said:
            print(
                f"setup: waiting up to {seconds:g} s for {busy} (another apt/dpkg runs)",
                file=sys.stderr,
            )
            said = True
        time.sleep(1)


def main(argv: list[str]) -> int:
    cmd, *args = argv or ["check"]
    if cmd == "digest":
        print(digest())
        return 0
    if cmd == "check":
        problem = check()
        if problem:
            print(f"setup: error: {problem}", file=sys.stderr)
            return 1
        return 0
    if cmd == "write" and len(args) == 1:
        n = write(Path(args[0]))
        print(f"lock: wrote {LOCK.name} ({n} pinned distributions)", file=sys.stderr)
        return 0
    if cmd == "wait-apt" and len(args) >= 1:
        busy = wait_apt(float(args[0]), tuple(args[1:]) or APT_LOCKS)
        if busy:
            print(
                f"setup: error: {busy} is still held after {args[0]} s by another apt/dpkg "
                "process; wait for it to finish and rerun",
                file=sys.stderr,
            )
            return 1
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
