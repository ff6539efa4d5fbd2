"""A planted environment whose judge ends the process on a marker in the agent's answer, and
the policy that exploits it on the Redis backend (for ``test_redis_worker_death_escapes_red20.py``;
workers import this module by name, so it is plain importable code, not a test).

``ExitEnv`` is ``planted_judge_crash.CrashEnv`` (a secret word, judged by equality) whose
verifier calls ``sys.exit`` when the reply contains ``MARKER``: the stand-in for every
environment bug a crafted action reaches that ends the worker process rather than raising
(``sys.exit`` in library code, an ``argparse`` of the agent's command line, an extension
that aborts, exhausted memory). On a ``gymforge worker`` the ``SystemExit`` leaves the
attempt's ``except Exception`` and ends the process with the task unacked.

``half_exiter`` answers the ``crash.solve`` tasks right and, on the ``crash.fail`` tasks,
where it has no answer, first calls a tool the environment does not have (an invalid call:
its penalty and the step's cost, -0.11) and then sends the marker; ``half_honest`` calls the
same tool and then sends a wrong word.
"""

from __future__ import annotations

import sys
from typing import Any

from planted_judge_crash import CrashEnv, HalfPolicy

from gymforge.core.env import EnvSpec
from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.core.types import Observation, Task, ToolCall
from gymforge.core.verdict import Verdict

MARKER = "<<worker-exit>>"


class ExitEnv(CrashEnv):
    """One reply, judged by equality; the judge ends the process on ``MARKER``."""

    spec = EnvSpec("planted-worker-exit", "1.0.0")

    def verify(self, task: Task, world: dict[str, Any], reply: str) -> Verdict:
        if MARKER in reply:
            die(reply)
        return super().verify(task, world, reply)


def die(reply: str) -> None:
    """The bug: the process ends (``sys.exit``). The Redis test, whose workers are threads,
    swaps in the end of the calling worker's event loop alone."""
    sys.exit(f"cannot go on with the reply {reply[:40]!r}")


class LooksThenMisses(HalfPolicy):
    """``HalfPolicy`` that, on a task it cannot solve, calls a tool first, then misses."""

    async def start(self, ctx: EpisodeContext) -> None:
        await super().start(ctx)
        self.looked = False

    async def act(self, observation: Observation) -> PolicyTurn:
        if self.solves or self.looked:
            return await super().act(observation) if self.solves else self.missed()
        self.looked = True
        return PolicyTurn(ToolCall(name="lookup", arguments={"word": "?"}))

    def missed(self) -> PolicyTurn:
        from gymforge.core.types import Reply

        return PolicyTurn(Reply(text=self.miss))


def half_exiter() -> HalfPolicy:
    return LooksThenMisses("half_exiter", f"no idea {MARKER}")


def half_honest() -> HalfPolicy:
    return LooksThenMisses("half_honest", "no idea")
