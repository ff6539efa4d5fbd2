"""What the QA suite runs against: an environment factory plus its declarations."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gymforge.core.capabilities import BUDGET, ORACLE, TASKS, supported
from gymforge.core.env import Environment, EnvSpec
from gymforge.core.episode import Budget
from gymforge.qa_profile import QA, QAProfile
from gymforge.registry.resolve import BUILTIN, resolve_factory
from gymforge.settings import Settings
from gymforge.tasks.source import TaskSource
from gymforge.verify.services import current

if TYPE_CHECKING:
    from gymforge.qa.fresh import FreshProcess


@dataclass
class QATarget:
    """``factory`` makes fresh instances; the rest is read once from a probe instance.

    ``import_ref`` names the factory so that another process can build it (a built-in id,
    ``module:attr`` or ``file.py:attr``); None when it cannot (a lambda, a closure), and then
    the fresh-process parts of the checks cannot run and say so."""

    ref: str
    factory: Callable[[], Environment]
    spec: EnvSpec
    tasks: TaskSource | None
    profile: QAProfile
    budget: Budget | None
    has_oracle: bool
    builtin: bool
    import_ref: str | None = None
    env_type: type | None = None
    settings: Settings = field(default_factory=Settings, compare=False)
    """The run's settings (the fresh process gets them; a ``ws://`` ref's token)."""
    _fresh: FreshProcess | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def load(
        cls, ref: str, *, start_fresh: bool = False, settings: Settings | None = None
    ) -> QATarget:
        """The target named by ``ref``. ``start_fresh`` starts its fresh process first, so
        that the child's start-up overlaps this process's own imports and probe.
        ``settings``: the run's (default: the current services', ``gymforge.verify.services``)."""
        settings = settings if settings is not None else current().settings
        remote = ref.startswith(("ws://", "wss://"))
        fresh = None
        if start_fresh and not remote:
            from gymforge.qa.fresh import FreshProcess

            fresh = FreshProcess(ref, settings=settings)
        try:
            factory = resolve_factory(ref, token=settings.token)
            target = cls.from_factory(factory, ref=ref, builtin=ref in BUILTIN)
        except BaseException:
            if fresh is not None:
                fresh.close()
            raise
        target.import_ref = None if remote else ref
        target.settings = settings
        target._fresh = fresh
        return target

    @classmethod
    def from_factory(
        cls, factory: Callable[[], Environment], ref: str = "", builtin: bool = False
    ) -> QATarget:
        probe = factory()
        try:
            has_tasks, has_qa = supported(probe, TASKS), supported(probe, QA)
            has_budget = supported(probe, BUDGET)
            tasks = has_tasks.tasks if has_tasks is not None else None
            return cls(
                ref=ref or probe.spec.id,
                factory=factory,
                spec=probe.spec,
                tasks=tasks if isinstance(tasks, TaskSource) else None,
                profile=has_qa.qa if has_qa is not None else QAProfile(),
                budget=has_budget.budget if has_budget is not None else None,
                has_oracle=supported(probe, ORACLE) is not None,
                builtin=builtin,
                import_ref=import_ref(factory),
                env_type=type(probe),
                settings=current().settings,
            )
        finally:
            asyncio.run(probe.close())

    def fresh_process(self) -> FreshProcess:
        """The run's fresh process (started on first use; see ``gymforge.qa.fresh``)."""
        from gymforge.qa.fresh import FreshProcess, FreshProcessError

        if self.ref.startswith(("ws://", "wss://")):
            raise FreshProcessError(
                "a served environment runs in its server's process, which only the server's "
                "side can restart"
            )
        if self.import_ref is None:
            raise FreshProcessError(
                "the factory has no import path (a lambda or closure?), so no other process "
                "can build it; give a module-level class or function"
            )
        if self._fresh is None:
            self._fresh = FreshProcess(self.import_ref, settings=self.settings)
        return self._fresh

    def fresh_unshifted(self) -> list[str]:
        """Tool subprocesses of the fresh process that its shifted clock did not reach."""
        return list(self._fresh.unshifted) if self._fresh is not None else []

    def close_fresh_process(self) -> None:
        if self._fresh is not None:
            self._fresh.close()
            self._fresh = None


def import_ref(factory: Callable[[], Environment]) -> str | None:
    """``module:qualname`` of a module-level class or function, else None."""
    module, name = getattr(factory, "__module__", None), getattr(factory, "__qualname__", "")
    if not module or not name or "<" in name or "." in name:
        return None
    if module == "__main__":
        path = getattr(sys.modules.get("__main__"), "__file__", None)
        return f"{path}:{name}" if path else None
    return f"{module}:{name}"
