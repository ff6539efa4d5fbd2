"""An asyncio event loop in a daemon thread, for servers that sync code starts and stops, and
the start of an aiohttp site on it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import TypeVar

from aiohttp import web

from gymforge.core.errors import UserError
from gymforge.serve.binding import binding

T = TypeVar("T")


class LoopThread:
    """Runs ``setup()`` on a fresh loop in a daemon thread, then keeps the loop running
    until :meth:`stop` (which awaits ``shutdown()`` there first)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None

    def start(self, setup: Callable[[], Awaitable[None]], timeout: float = 10.0) -> None:
        """Start the thread and wait (at most ``timeout`` s) for ``setup`` to finish;
        RuntimeError carrying its exception if it failed."""
        if self._thread is not None:
            raise RuntimeError(f"{self.name} already running")
        ready = threading.Event()
        errors: list[BaseException] = []

        def main() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            self.loop = loop
            try:
                loop.run_until_complete(setup())
            except BaseException as err:
                errors.append(err)
                ready.set()
                loop.close()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

        self._thread = threading.Thread(target=main, name=self.name, daemon=True)
        self._thread.start()
        if not ready.wait(timeout):
            raise TimeoutError(f"{self.name} did not start within {timeout} s")
        if errors:
            self._thread = None
            if isinstance(errors[0], UserError):  # a busy --port, say: the user's to fix
                raise errors[0]
            raise RuntimeError(f"{self.name} failed to start: {errors[0]!r}") from errors[0]

    def call(self, coro: Awaitable[T], timeout: float = 30.0) -> T:
        """Run ``coro`` on the loop from another thread and return its result."""
        assert self.loop is not None, f"{self.name} is not running"
        return asyncio.run_coroutine_threadsafe(_wrap(coro), self.loop).result(timeout)

    def stop(self, shutdown: Callable[[], Awaitable[None]], timeout: float = 10.0) -> None:
        loop, thread = self.loop, self._thread
        if loop is None or thread is None:
            return
        fut = asyncio.run_coroutine_threadsafe(_wrap(shutdown()), loop)
        try:
            fut.result(timeout)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout)
            self._thread = self.loop = None


async def _wrap(aw: Awaitable[T]) -> T:
    return await aw


async def start_site(runner: web.AppRunner, host: str, port: int, backlog: int = 128) -> int:
    """Set ``runner`` up, serve it on ``host:port`` and return the port it got (``port`` 0:
    an ephemeral one)."""
    await runner.setup()
    site = web.TCPSite(runner, host, port, backlog=backlog)
    with binding(host, port):
        await site.start()
    server = getattr(site, "_server", None)
    if server is not None and server.sockets:
        return int(server.sockets[0].getsockname()[1])
    return port
