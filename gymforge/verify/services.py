"""What the verifiers of one run share, owned by that run: :class:`RunServices`.

The code judge's sandbox backend, the math verifier's worker pool and the third-party
scorers' sandboxes are costly to start (pre-forked zygotes), so the episodes of a run share
them. They used to be process-wide singletons configured through environment variables, so a
second run in the same process inherited the first one's sandbox choice and pools. Now the
run owns them: the CLI command (or, for a library caller, ``run``/``run_qa``) creates one
``RunServices`` from its :class:`~gymforge.settings.Settings`, *activates* it for everything
it calls, and closes it at its end. Environments reach it with :func:`current`, through a
context variable: asyncio tasks started inside the run inherit it; a thread started inside
the run does not, unless it is started with ``contextvars.copy_context().run``.

Outside any run (a test or notebook calling ``env.step`` directly) :func:`current` is the
*library default*: a ``RunServices`` from the process environment as it is at the call,
created on first use (and again when the environment's settings change), closed at exit. No
run ever uses it.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar

from gymforge.settings import Settings

if TYPE_CHECKING:  # imported where used: a run that judges no code starts no sandbox code
    from gymforge.sandbox.backend import BaseBackend
    from gymforge.verify.math.pool import MathPool

T = TypeVar("T")

_ACTIVE: ContextVar[RunServices | None] = ContextVar("gymforge_run_services", default=None)


class RunServices:
    """A run's shared verification resources, each created on first use from ``settings``
    and closed by :meth:`close`. A context manager: ``with RunServices(s) as services:``
    activates it (see :func:`current`) and closes it at the end."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings if settings is not None else Settings()
        self.closed = False
        self._lock = threading.RLock()  # ``make`` may ask how many of a kind exist
        self._resources: dict[object, Any] = {}
        self._owner_pid = os.getpid()
        self._tokens: list[Any] = []

    # ---- the resources -------------------------------------------------------------------
    def resource(self, key: object, make: Callable[[], T]) -> T:
        """The resource ``key`` of this run, made by ``make()`` on first use. It must have a
        ``close()`` (or ``shutdown()``), which :meth:`close` calls."""
        with self._lock:
            if self.closed:
                raise RuntimeError("these run services are closed (the run has ended)")
            if key not in self._resources:
                self._resources[key] = make()
            found: T = self._resources[key]
            return found

    def count(self, kind: str) -> int:
        """How many resources whose key is a tuple starting with ``kind`` exist."""
        with self._lock:
            return sum(1 for k in self._resources if isinstance(k, tuple) and k[:1] == (kind,))

    def close_kind(self, kind: str) -> None:
        """Close (and forget) the resources whose key is a tuple starting with ``kind``."""
        with self._lock:
            keys = [k for k in self._resources if isinstance(k, tuple) and k[:1] == (kind,)]
            found = [self._resources.pop(k) for k in keys]
        for resource in found:
            _close(resource)

    def sandbox(self) -> BaseBackend:
        """The code judge's sandbox backend: ``settings.sandbox`` (``local`` or ``docker``),
        ``settings.sandbox_workers`` workers (default: the CPU count, at most 8), refusing to
        run without isolation unless ``settings.unsafe_no_isolation``."""
        from gymforge.sandbox.factory import get_backend

        s = self.settings

        def make() -> BaseBackend:
            workers = s.sandbox_workers or min(8, os.cpu_count() or 2)
            kw: dict[str, Any] = {"workers": max(1, workers)}
            if s.sandbox_uid_base is not None:
                kw["uid_base"] = s.sandbox_uid_base
            return get_backend(s.sandbox, unsafe_no_isolation=s.unsafe_no_isolation, **kw)

        return self.resource("sandbox", make)

    def math_pool(self) -> MathPool:
        """The math verifier's worker pool (``settings.math_workers``; default min(2, CPUs)).
        A pool that a fork detached (``MathPool`` in a forked child) is replaced."""
        from gymforge.verify.math.pool import MathPool

        pool = self.resource("math", lambda: MathPool(self.settings.math_workers))
        if pool.closed and not self.closed:
            with self._lock:
                if self._resources.get("math") is pool:
                    pool = self._resources["math"] = MathPool(self.settings.math_workers)
        return pool

    # ---- lifetime ------------------------------------------------------------------------
    def close(self) -> None:
        """Close every resource (in reverse order of creation); idempotent. In a forked child
        it only forgets them: the parent owns them."""
        with self._lock:
            self.closed = True
            resources, self._resources = list(self._resources.values()), {}
        if os.getpid() != self._owner_pid:
            return
        for resource in reversed(resources):
            _close(resource)

    @contextlib.contextmanager
    def activate(self) -> Iterator[RunServices]:
        """Make this the :func:`current` services of everything called inside (not closed
        at the end: see ``with``)."""
        token = _ACTIVE.set(self)
        try:
            yield self
        finally:
            _ACTIVE.reset(token)

    def __enter__(self) -> RunServices:
        self._tokens.append(_ACTIVE.set(self))
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            _ACTIVE.reset(self._tokens.pop())
        finally:
            self.close()


def _close(resource: Any) -> None:
    closer = getattr(resource, "close", None) or getattr(resource, "shutdown", None)
    if closer is not None:
        with contextlib.suppress(Exception):
            closer()


def active() -> RunServices | None:
    """The services of the run this code runs in, or None outside any run."""
    return _ACTIVE.get()


@contextlib.contextmanager
def run_services(settings: Settings | None = None) -> Iterator[RunServices]:
    """The services for a run: the active ones when the caller (a CLI command) already owns
    them and ``settings`` is None or theirs; else new ones from ``settings`` (default: the
    process environment, read once here), active inside and closed at the end."""
    found = active()
    if found is not None and (settings is None or settings == found.settings):
        yield found
        return
    with RunServices(settings if settings is not None else Settings.from_environ()) as services:
        yield services


_default: RunServices | None = None
_default_lock = threading.Lock()


def current() -> RunServices:
    """The active run's services; outside any run, the library default (see the module
    docstring)."""
    found = _ACTIVE.get()
    if found is not None:
        return found
    global _default
    settings = Settings.from_environ()  # a few look-ups: the default follows the environment
    with _default_lock:
        old = _default
        if old is None or old.closed or old._owner_pid != os.getpid() or old.settings != settings:
            new = _default = RunServices(settings)
            if old is not None:
                old.close()  # in a forked child this only forgets the parent's
            return new
        return old


@atexit.register
def _close_default() -> None:
    if _default is not None:
        _default.close()
