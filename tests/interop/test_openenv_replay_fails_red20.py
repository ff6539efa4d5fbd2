"""Attack: on the tasks it fails, first send an action the served environment will not
replay (a name claimed in a store its sessions share), then the action its ``step`` raises
on, and have the episode retried as the server failing, then left unwritten.

The OpenEnv adapter judges a failed step by the rule of ``gymforge.core.blame``: the probe
is the episode's reset on a new session; answered, the episode's earlier actions are
replayed there and the failing action sent once more (failing again: counted,
``env_failed_on_action``). A replay that failed left the failure the server's (retried): a
dead or restarted server, or a nondeterministic one. But the earlier actions are the
agent's: one that succeeds once and fails when sent again (``claim:NAME`` of
``trap_env_environment.py``, a fresh name each attempt) made the replay fail on purpose.
Over the 100 word tasks, a policy that says the word on the 50 it knows and on the rest
claims a fresh name and asks ``hint:anything`` had only its successes written.

The defence: a replay that fails is probed once more (the episode's reset on yet another
session); answered, the agent's actions are what fail the server, and the episode ends
counted (``env_failed_on_action``, the replay's failure in ``facts["server_error"]``); a
server that does not answer it (gone, restarted, full) is still infrastructure, retried.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from interop_helpers import needs
from test_openenv_step_raises_on_action_red19 import TASKS, TRAP, KnowsHalf, env_dir, play, server

pytestmark = needs("openenv")
__all__ = ["env_dir", "server"]  # the red19 test's fixtures: its trap environment's server

NAMES = itertools.count()
"""Every claim of the run a fresh name (the retried attempts too)."""


class ClaimsThenTraps(KnowsHalf):
    """``KnowsHalf`` whose miss is two actions: a fresh ``claim:NAME``, then ``TRAP``."""

    def __init__(self) -> None:
        super().__init__(TRAP)
        self.claimed = False

    async def start(self, ctx: Any) -> None:
        self.claimed = False

    async def act(self, observation: Any) -> Any:
        from gymforge.core.policy import PolicyTurn
        from gymforge.core.types import Reply

        if self.claimed:  # the claim answered: the action the server raises on
            return PolicyTurn(Reply(text=TRAP))
        turn = await super().act(observation)
        if turn.action.text != TRAP:
            return turn
        self.claimed = True
        return PolicyTurn(Reply(text=f"claim:n{next(NAMES)}"))


def test_an_action_that_does_not_replay_is_a_counted_failure(server: str, tmp_path: Path) -> None:
    """100 tasks: every episode written, mean reward 0.5, the plain failer's. Before: 50
    written (the successes), mean 1.0, 50 retried and given up."""
    honest = play(server, lambda: KnowsHalf("nope"), tmp_path / "honest")
    assert not honest.errors and honest.summary["episodes"] == TASKS
    trapped = play(server, ClaimsThenTraps, tmp_path / "trap")
    assert not trapped.errors, (len(trapped.errors), trapped.errors[:2])
    assert trapped.summary["infra_retries"] == 0
    assert trapped.summary["episodes"] == TASKS
    assert trapped.summary["mean_reward"] == honest.summary["mean_reward"] == 0.5
    assert trapped.summary["failure_reasons"]["env_failed_on_action"] == TASKS // 2
