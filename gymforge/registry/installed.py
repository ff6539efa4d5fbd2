"""Environments that installed packages register through the ``gymforge.environments``
entry-point group.

A package declares, in its ``pyproject.toml``::

    [project.entry-points."gymforge.environments"]
    stockroom = "stockroom.env:StockroomEnv"

The entry point's name is the environment id and must equal the environment's ``spec.id``;
its value is a ``module:attr`` factory (an ``Environment`` class or a zero-argument function).
``installed()`` scans the group once per process and sorts what it finds into usable entries
and refused ones: a name that is a built-in id, a name two distributions claim (naming both),
a name that is not a plain id. An entry point whose module fails to import is found only when
it is loaded, and ``load`` says so in one line naming the package, so listing the others goes
on. Resolving a built-in id never scans (``resolve`` checks ``BUILTIN`` first).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import metadata

from gymforge.core.env import Environment
from gymforge.core.errors import UserError
from gymforge.registry.authoring import check_hooks, import_failure

GROUP = "gymforge.environments"
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@dataclass(frozen=True)
class InstalledEnv:
    """One entry point of the group: ``id = value`` from distribution ``package``."""

    id: str
    value: str
    package: str
    package_version: str
    problem: str | None = None
    """Why the entry is refused (None: usable)."""

    @property
    def origin(self) -> str:
        return f"{self.package} {self.package_version}"


@dataclass(frozen=True)
class Installed:
    """The scan's result: usable entries by id, and refused ones (each with its problem)."""

    usable: dict[str, InstalledEnv]
    refused: list[InstalledEnv]

    def all(self) -> list[InstalledEnv]:
        """Every entry, usable or refused, ordered by id then package."""
        return sorted([*self.usable.values(), *self.refused], key=lambda e: (e.id, e.package))


def _entries() -> Iterable[InstalledEnv]:
    """The group's entry points (``entry_points`` keeps the first distribution of a name on
    ``sys.path``, as imports do)."""
    for ep in metadata.entry_points(group=GROUP):
        dist = ep.dist
        name = str(dist.metadata["Name"]) if dist is not None else "?"
        version = str(dist.version) if dist is not None else "?"
        yield InstalledEnv(ep.name, ep.value, name, version)


def _problem(env_id: str, claims: list[InstalledEnv], reserved: set[str]) -> str | None:
    if len(claims) > 1:
        names = " and ".join(sorted(c.origin for c in claims))
        return f"id {env_id!r} is claimed by {len(claims)} packages: {names}; uninstall one"
    if env_id in reserved:
        return f"claims the built-in id {env_id!r}; rename the entry point"
    if not _ID.match(env_id):
        return (
            f"entry point name {env_id!r} is not an environment id (letters, digits, "
            "'_', '.', '-'; at most 64 characters)"
        )
    if ":" not in claims[0].value:
        return f"entry point value {claims[0].value!r} is not module:attr"
    return None


def sort_entries(entries: Iterable[InstalledEnv], builtin: Iterable[str]) -> Installed:
    """Refuse built-in ids, ids claimed by two or more packages, and malformed ids."""
    reserved = set(builtin)
    by_id: dict[str, list[InstalledEnv]] = {}
    for entry in entries:
        by_id.setdefault(entry.id, []).append(entry)
    usable: dict[str, InstalledEnv] = {}
    refused: list[InstalledEnv] = []
    for env_id, claims in sorted(by_id.items()):
        problem = _problem(env_id, claims, reserved)
        if problem is None:
            usable[env_id] = claims[0]
        else:
            refused.extend(
                InstalledEnv(c.id, c.value, c.package, c.package_version, problem) for c in claims
            )
    return Installed(usable, refused)


@functools.cache
def installed(builtin: frozenset[str]) -> Installed:
    """The group's entries, scanned once per process (``installed.cache_clear()`` rescans)."""
    return sort_entries(_entries(), builtin)


def _refusal(entry: InstalledEnv) -> UserError:
    return UserError(f"environment {entry.id!r} from {entry.origin} is refused: {entry.problem}")


def one_line(err: BaseException) -> str:
    """The first line of an error's message (a location line's code excerpt dropped)."""
    return (str(err).strip().splitlines() or [type(err).__name__])[0]


def load(entry: InstalledEnv) -> Callable[[], Environment]:
    """The factory behind a usable entry, checked to make an environment whose ``spec.id``
    is the entry's id; a ``UserError`` of one line naming the package otherwise."""
    if entry.problem is not None:
        raise _refusal(entry)
    module_name = entry.value.partition(":")[0]
    try:
        found = metadata.EntryPoint(entry.id, entry.value, GROUP).load()
    except Exception as err:
        why = one_line(import_failure(module_name, err))
        raise UserError(
            f"environment {entry.id!r} from {entry.origin} failed to import ({entry.value}): {why}"
        ) from None
    if not callable(found):
        raise UserError(
            f"environment {entry.id!r} from {entry.origin}: {entry.value} is not callable"
        )
    if isinstance(found, type):
        check_hooks(found)

    def factory() -> Environment:
        env: Environment = found()
        if isinstance(env, Environment) and env.spec.id != entry.id:
            raise UserError(
                f"environment {entry.id!r} from {entry.origin}: {entry.value} made an "
                f"environment whose spec.id is {env.spec.id!r}; the entry point's name must "
                "equal it"
            )
        return env  # not an Environment at all: make_env says so

    return factory


def find(env_id: str, builtin: frozenset[str]) -> InstalledEnv | None:
    """The entry for ``env_id`` (refused ones too, so that the error says why); None if no
    package registers it."""
    scan = installed(builtin)
    if env_id in scan.usable:
        return scan.usable[env_id]
    return next((e for e in scan.refused if e.id == env_id), None)


__all__ = ["GROUP", "Installed", "InstalledEnv", "find", "installed", "load", "sort_entries"]
