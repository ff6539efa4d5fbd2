"""The one module that reads the process environment (``os.environ``).

Configuration is passed, not set: the CLI builds one :class:`Settings` (its flags over
:meth:`Settings.from_environ`) and hands it down as an argument; the runner, QA, ``grade`` and
``serve`` give it to the objects they own for the run (``gymforge.verify.services``), and no
layer below reads or writes a variable to learn what the run is. A library caller that passes
no settings gets ``Settings.from_environ()`` once, at the entry point it called (``run``,
``run_qa``, ``make``), never deep inside. ``tests/test_settings_edge.py`` holds this: any
other module of gymforge that touches ``os.environ`` fails it, except the documented children
listed there (code that runs *in* a child process and reads what its parent wrote into the
child's environment: the sandbox's zygote and job child, the in-sandbox scorers, the QA fresh
process).

The variables, and what they mean:

Run configuration (fields of :class:`Settings`):

- ``GYMFORGE_SANDBOX``: the sandbox backend untrusted code runs in, ``local`` (bubblewrap on
  this host, the default) or ``docker`` (containers of podman or another Docker-compatible
  engine). ``--sandbox`` overrides it.
- ``GYMFORGE_UNSAFE_NO_ISOLATION``: any value but empty or ``0`` lets untrusted code run
  WITHOUT isolation where bubblewrap cannot start (a loud warning is printed).
  ``--unsafe-no-isolation`` (``grade``) sets it for the run.
- ``GYMFORGE_TOKEN``: the bearer token of a ``ws://`` served environment. ``--token``
  overrides it.
- ``GYMFORGE_SEAL_KEY``: the seal key (its UTF-8 bytes; empty is unset) that seals a run's
  records; ``--seal-key-file`` overrides it (``gymforge.trajectory.seal.load_key``).
- ``GYMFORGE_SANDBOX_WORKERS``: the code judge's sandbox workers (default: the CPU count, at
  most 8).
- ``GYMFORGE_SANDBOX_UID_BASE``: the first uid of the sandbox workers.
- ``GYMFORGE_MATH_WORKERS``: the math verifier's worker processes (default: min(2, CPUs)).
- ``GYMFORGE_RG_SCORER_WORKERS``: the sandbox workers of third-party scorers (reasoning-gym,
  Verifiers rubrics; default: min(4, CPUs)).
- ``GYMFORGE_HARBOR_IMAGE_MAP``: ``FROM=LOCAL[,FROM=LOCAL...]``, the local image that stands
  for each base image a ``harbor:`` task's Dockerfile names; ``--image-map`` adds entries.
- ``GYMFORGE_HARBOR_NETWORK``: any value but empty or ``0`` grants a ``harbor:`` task that
  asks for the network (``allow_internet``) the engine's default network, which also reaches
  every service the host binds to all its addresses; unset, such a task runs without one.

Facts about this host, read where they are used (:func:`host_tool` and the functions below):

- ``GYMFORGE_BWRAP``, ``GYMFORGE_SETPRIV``: the ``bwrap``/``setpriv`` to use instead of the
  ones on ``PATH``.
- ``GYMFORGE_DOCKER``: the container engine CLI (default: ``podman``, else ``docker``).
- ``GYMFORGE_SANDBOX_IMAGE``: the image container sandboxes run in.
- ``GYMFORGE_SANDBOX_CACHE``: the directory of the sandbox's compiled artefacts.
- ``GYMFORGE_CHECK_TRUSTED``: ``1`` validates every truth a family builds ``trusted`` as
  well, refusing a difference (``gymforge.tasks.trusted``; read once, at import).
- ``OPENAI_API_KEY``, ``WANDB_PROJECT``, ``XDG_CACHE_HOME``, ``PYTHONHASHSEED``: their usual
  meanings.

A child process that is itself gymforge (the QA fresh process) gets the parent's settings
through its own environment, written explicitly by the parent (:meth:`Settings.child_vars`);
the child reads them back here. That is a process boundary crossed by an argument, not a
setting changed under the parent's own feet.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Self

from gymforge.core.errors import ConfigError

SANDBOX_ENV = "GYMFORGE_SANDBOX"
UNSAFE_ENV = "GYMFORGE_UNSAFE_NO_ISOLATION"
TOKEN_ENV = "GYMFORGE_TOKEN"
SEAL_KEY_ENV = "GYMFORGE_SEAL_KEY"
IMAGE_MAP_ENV = "GYMFORGE_HARBOR_IMAGE_MAP"
HARBOR_NETWORK_ENV = "GYMFORGE_HARBOR_NETWORK"
SANDBOX_KINDS = ("local", "docker")

_INT_VARS = {
    "sandbox_workers": "GYMFORGE_SANDBOX_WORKERS",
    "sandbox_uid_base": "GYMFORGE_SANDBOX_UID_BASE",
    "math_workers": "GYMFORGE_MATH_WORKERS",
    "rg_scorer_workers": "GYMFORGE_RG_SCORER_WORKERS",
}


def check_sandbox_kind(kind: str) -> str:
    """``kind`` (stripped, lower case) when it names a selectable backend, else a one-line
    ``ConfigError``."""
    kind = kind.strip().lower()
    if kind not in SANDBOX_KINDS:
        raise ConfigError(f"unknown sandbox backend {kind!r} ({SANDBOX_ENV}); use local or docker")
    return kind


def parse_image_map(text: str) -> tuple[tuple[str, str], ...]:
    """``FROM=LOCAL[,FROM=LOCAL...]`` as ``(FROM, LOCAL)`` pairs (a later entry for the same
    ``FROM`` wins); a one-line ``ConfigError`` on a malformed entry."""
    out: dict[str, str] = {}
    for entry in (e.strip() for e in text.split(",")):
        if not entry:
            continue
        src, sep, dst = entry.partition("=")
        if not sep or not src.strip() or not dst.strip() or re.search(r"\s", src + dst):
            raise ConfigError(f"--image-map {entry!r}: write it FROM=LOCAL, e.g. python:3.12=my-py")
        out[src.strip()] = dst.strip()
    return tuple(out.items())


@dataclass(frozen=True)
class Settings:
    """What a run is configured with, beyond its own spec. Immutable: a change is a new
    object (``with_(sandbox="docker")``), so one run's choice cannot reach another's."""

    sandbox: str = "local"
    unsafe_no_isolation: bool = False
    token: str | None = None
    seal_key: bytes | None = None
    sandbox_workers: int | None = None
    sandbox_uid_base: int | None = None
    math_workers: int | None = None
    rg_scorer_workers: int | None = None
    image_map: tuple[tuple[str, str], ...] = ()
    harbor_network: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "sandbox", check_sandbox_kind(self.sandbox))
        for name, var in _INT_VARS.items():
            value = getattr(self, name)
            if value is not None and value < (0 if name == "sandbox_uid_base" else 1):
                raise ConfigError(f"{var} must be a positive number, not {value}")

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Self:
        """The settings the variables of ``environ`` (default: this process's) give; unset
        or empty variables keep the defaults. A malformed number is a one-line
        ``ConfigError`` naming the variable."""
        env = os.environ if environ is None else environ
        ints: dict[str, int | None] = {}
        for name, var in _INT_VARS.items():
            raw = env.get(var, "").strip()
            try:
                ints[name] = int(raw) if raw else None
            except ValueError:
                raise ConfigError(f"{var}={raw!r} is not a whole number") from None
        return cls(
            sandbox=env.get(SANDBOX_ENV, "").strip() or "local",
            unsafe_no_isolation=env.get(UNSAFE_ENV, "") not in ("", "0"),
            token=environ_token(env),
            seal_key=environ_seal_key(env),
            image_map=parse_image_map(env.get(IMAGE_MAP_ENV, "")),
            harbor_network=env.get(HARBOR_NETWORK_ENV, "") not in ("", "0"),
            **ints,
        )

    def with_(self, **changes: object) -> Self:
        """A copy with ``changes``; ``None`` values are ignored (an absent flag keeps what
        the environment said)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})  # type: ignore[arg-type]

    def child_vars(self) -> dict[str, str]:
        """These settings as the variables a gymforge child process reads back with
        :meth:`from_environ` (every field: the child sees exactly the parent's settings, not
        whatever its own environment happens to hold), but no secret: the seal key and the
        token are empty there (a child process writes no records and, built from an import
        path, calls no server), so neither spreads to the processes it starts."""
        out = {SANDBOX_ENV: self.sandbox, UNSAFE_ENV: "1" if self.unsafe_no_isolation else ""}
        out[TOKEN_ENV] = out[SEAL_KEY_ENV] = ""
        out[IMAGE_MAP_ENV] = ",".join(f"{k}={v}" for k, v in self.image_map)
        out[HARBOR_NETWORK_ENV] = "1" if self.harbor_network else ""
        for name, var in _INT_VARS.items():
            value = getattr(self, name)
            out[var] = "" if value is None else str(value)
        return out

    def __repr__(self) -> str:  # never print a secret
        shown = {
            f.name: ("<set>" if getattr(self, f.name) else None)
            if f.name in ("token", "seal_key")
            else getattr(self, f.name)
            for f in fields(self)
        }
        return "Settings(" + ", ".join(f"{k}={v!r}" for k, v in shown.items()) + ")"


def environ_token(environ: Mapping[str, str] | None = None) -> str | None:
    """A non-empty ``$GYMFORGE_TOKEN``, else None (alone, like ``environ_seal_key``): what a
    library caller that passes no token to a ``ws://`` client gets."""
    return (os.environ if environ is None else environ).get(TOKEN_ENV) or None


def environ_seal_key(environ: Mapping[str, str] | None = None) -> bytes | None:
    """The UTF-8 bytes of a non-empty ``$GYMFORGE_SEAL_KEY``, else None (alone: reading the
    key needs no other setting to be well-formed)."""
    value = (os.environ if environ is None else environ).get(SEAL_KEY_ENV)
    return value.encode("utf-8") if value else None


# ---- facts about this host ---------------------------------------------------------------


def host_tool(name: str) -> str | None:
    """``$GYMFORGE_<NAME>`` (``bwrap``, ``setpriv``): the program to use instead of the one
    on ``PATH``; None when unset or empty."""
    return os.environ.get(f"GYMFORGE_{name.upper()}") or None


def container_cli() -> str | None:
    """``$GYMFORGE_DOCKER``: the container engine CLI the user chose (None: look for one)."""
    return os.environ.get("GYMFORGE_DOCKER") or None


def check_trusted_truth() -> bool:
    """``$GYMFORGE_CHECK_TRUSTED`` is ``1``: validate trusted truth builds as well."""
    return os.environ.get("GYMFORGE_CHECK_TRUSTED", "") == "1"


def sandbox_image() -> str | None:
    """``$GYMFORGE_SANDBOX_IMAGE``: the image container sandboxes run in (None: the default)."""
    return os.environ.get("GYMFORGE_SANDBOX_IMAGE") or None


def sandbox_cache() -> str | None:
    """``$GYMFORGE_SANDBOX_CACHE``: the sandbox's artefact directory (None: the default)."""
    return os.environ.get("GYMFORGE_SANDBOX_CACHE") or None


def openai_api_key() -> str | None:
    return os.environ.get("OPENAI_API_KEY") or None


def openai_base_url() -> str | None:
    """``$OPENAI_BASE_URL``, which the OpenAI SDK reads when no base URL is given."""
    return os.environ.get("OPENAI_BASE_URL") or None


def wandb_project() -> str | None:
    return os.environ.get("WANDB_PROJECT") or None


def cache_home() -> str | None:
    """``$XDG_CACHE_HOME`` (None when unset or empty)."""
    return os.environ.get("XDG_CACHE_HOME") or None


def python_hash_seed() -> str:
    """``$PYTHONHASHSEED`` of this process ('' when unset)."""
    return os.environ.get("PYTHONHASHSEED", "")


# ---- the environment of child processes and of third-party libraries ----------------------


def inherited_environ(**overrides: str) -> dict[str, str]:
    """A copy of this process's environment for a child process, with ``overrides``: the one
    place a child's environment starts from ours."""
    return {**os.environ, **overrides}


def library_default(name: str, value: str) -> None:
    """Set ``$name`` for a third-party library in this process that reads only its
    environment (Ray's ``RAY_AUTH_MODE``, hypothesis's storage directory), unless the user
    set it. Never a gymforge setting: those are passed."""
    os.environ.setdefault(name, value)
