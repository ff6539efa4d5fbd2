"""Read-only job files, enforced by the kernel: Landlock, via ctypes. Standard library only
(copied into the sandbox next to ``zygote.py``; the job child calls ``restrict_writes``).

Landlock lets an unprivileged process give up rights for itself and every process it starts
(``execve`` and ``fork`` inherit the restriction, and nothing can lift it). ``restrict_writes``
gives up every filesystem right that changes the tree (write, truncate, create, rename, link,
remove, ``mknod``, symlink) everywhere but beneath the directories it is told to keep:
the job's scratch directory, whole, and ``/dev`` for writes only (``/dev/null`` and friends).
Reading and executing stay allowed everywhere the jail allows them. The zygote that set the
job up is not restricted, so it still cleans the job directory afterwards.

Needs Linux 5.13 or newer with the ``landlock`` LSM enabled (ABI 1); ``truncate`` is covered
from ABI 3 (Linux 6.2). ``landlock_abi()`` says what this kernel offers (0: none).
"""

from __future__ import annotations

import ctypes
import os
from typing import TYPE_CHECKING

# In the sandbox this file's siblings are imported by bare name (its directory is on
# sys.path); on the host (doctor, preflight, models) it is a module of this package.
if TYPE_CHECKING or __package__:
    from gymforge.sandbox.jail import libc, prctl
else:
    from jail import libc, prctl

SCRATCH = ".gf-scratch"
"""The one writable directory of a read-only job, under its job directory (``HOME``,
``TMPDIR``); made by the zygote, so a job's files can never be placed there."""

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same on x86_64 and arm64
_VERSION = 1  # LANDLOCK_CREATE_RULESET_VERSION
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

WRITE_FILE = 1 << 1
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2: rename and link across directories
TRUNCATE = 1 << 14  # ABI 3
_ABI1 = (
    WRITE_FILE
    | REMOVE_DIR
    | REMOVE_FILE
    | MAKE_CHAR
    | MAKE_DIR
    | MAKE_REG
    | MAKE_SOCK
    | MAKE_FIFO
    | MAKE_BLOCK
    | MAKE_SYM
)


class _RulesetAttr(ctypes.Structure):  # struct landlock_ruleset_attr (its first field)
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):  # struct landlock_path_beneath_attr, packed
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _syscall(*args: object) -> int:
    ctypes.set_errno(0)
    r = int(libc().syscall(*args))
    if r < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return r


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is missing or disabled."""
    try:
        return _syscall(ctypes.c_long(_CREATE_RULESET), None, ctypes.c_size_t(0), _VERSION)
    except OSError:
        return 0


def write_rights(abi: int) -> int:
    """Every right that changes the filesystem tree that ABI ``abi`` knows."""
    return _ABI1 | (REFER if abi >= 2 else 0) | (TRUNCATE if abi >= 3 else 0)


def restrict_writes(writable: list[str], devices: str = "/dev") -> int:
    """Give up, for this process and all it starts, every tree-changing right except beneath
    ``writable`` (all rights) and ``devices`` (writing to existing files). Returns the ABI.
    Raises OSError naming Landlock when the kernel cannot do it: a job that asked for
    read-only files never runs without them."""
    abi = landlock_abi()
    if abi < 1:
        raise OSError(
            "read-only job files need Landlock (Linux 5.13+ with the landlock LSM enabled); "
            "this kernel has none"
        )
    handled = write_rights(abi)
    attr = _RulesetAttr(handled)
    ruleset = _syscall(
        ctypes.c_long(_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), 0
    )
    try:
        rules = [(p, handled) for p in writable]
        if os.path.isdir(devices):
            rules.append((devices, handled & (WRITE_FILE | TRUNCATE)))
        for path, allowed in rules:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                rule = _PathBeneath(allowed, fd)
                _syscall(
                    ctypes.c_long(_ADD_RULE), ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0
                )
            finally:
                os.close(fd)
        if not prctl(_PR_SET_NO_NEW_PRIVS, 1):
            e = ctypes.get_errno()
            raise OSError(e, f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(e)}")
        _syscall(ctypes.c_long(_RESTRICT_SELF), ruleset, 0)
    finally:
        os.close(ruleset)
    return abi
