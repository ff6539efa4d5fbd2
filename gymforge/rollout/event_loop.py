"""The event loop gymforge runs its own rollouts on: uvloop where it is installed.

A process whose loop gymforge starts (``gymforge run`` and ``eval`` through
:func:`gymforge.rollout.runner.run_sync`, ``gymforge worker --redis``, ``GymforgeRollout``'s
loop in a trainer) runs it on uvloop when uvloop imports, else on asyncio's default loop.
uvloop's loop does the same work in compiled code: a single-turn rollout costs about a tenth
less client CPU per episode on it (``benchmarks/rollout_cpu.py``'s ``gymforge`` and
``gymforge-asyncio`` sides), and nothing a run records depends on which loop played it.

``$GYMFORGE_EVENT_LOOP`` picks one: ``asyncio`` (the standard library's loop even where uvloop
is installed), ``uvloop`` (an error if it does not import), or ``auto`` (the default, above).
A caller running gymforge on a loop of its own (``await run(...)``) keeps that loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from gymforge.core.errors import UserError
from gymforge.settings import event_loop_choice

T = TypeVar("T")

ENV_VAR = "GYMFORGE_EVENT_LOOP"
CHOICES = ("auto", "uvloop", "asyncio")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The new-loop factory for ``asyncio.Runner`` (None: asyncio's default loop), as
    ``$GYMFORGE_EVENT_LOOP`` says (module docstring)."""
    choice = event_loop_choice().strip().lower() or "auto"
    if choice not in CHOICES:
        raise UserError(f"${ENV_VAR} is {choice!r}; use one of {', '.join(CHOICES)}")
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError as err:
        if choice == "uvloop":
            raise UserError(f"${ENV_VAR}=uvloop, but uvloop does not import: {err}") from err
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def new_runner() -> asyncio.Runner:
    """An ``asyncio.Runner`` on gymforge's loop (Ctrl-C cancels its main task, as
    ``asyncio.run``'s does)."""
    return asyncio.Runner(loop_factory=loop_factory())


def run_on_loop(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on gymforge's loop."""
    try:
        runner = new_runner()
    except BaseException:
        main.close()  # never awaited: no "coroutine was never awaited" warning
        raise
    with runner:
        return runner.run(main)
