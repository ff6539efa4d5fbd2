"""Reward defects planted in the honest stock-lookup environment (``planted_rl_bugs.StockEnv``)
that an earlier ``gymforge qa`` passed: each pays a policy that does not solve the task,
where no check looked. Importable as ``planted_reward_seams:<Name>`` under pytest.

- ``HedgePaidEnv``: a failed answer is paid through the verdict's partial ``score``; the
  red-team attacks that earn it were judged only on ``success``.
- ``HeldOutBlindEnv``: the verifier's defect lives in the held-out region alone, which the
  red-team sample seldom drew (and the baselines, on training tasks, never do).
- ``VerbosePaidEnv``: a long reply is paid whatever it says; no baseline wrote one.
- ``VerdictCacheEnv``: a verdict memo that survives ``reset`` pays an answer on a reused
  instance because it passed an earlier task there.
- ``OneFamilyConstantEnv``: one family's answer is a constant, a quarter of all tasks.
- ``LongEpisodeEnv``: success depends on the episode's step count.
- ``CutOffPaidEnv``: a reply the token budget cuts off is paid through a component other
  than ``task``, the only one ``truncation_accounting`` read.
"""

from __future__ import annotations

import random
import re
from typing import Any

from planted_rl_bugs import (
    HELD_OUT,
    LEVELS,
    ConstantGoldFamily,
    StockEnv,
    StockFamily,
    StockTruth,
    World,
)

from gymforge.authoring import Budget, Split, Task, TaskSource, Verdict
from gymforge.envs.digits import DigitsEnv
from gymforge.reward.standard import StandardReward


class HedgePaidEnv(StockEnv):
    """Defect: partial credit for "the right number is somewhere in the reply": the verdict
    fails (the reply is not the number alone) but its ``score`` is 0.8, and the reward pays
    the score (``StandardReward(partial_credit=True)``). "12 or 13" earns 0.8 of a solve on
    every task; the near-miss baseline's scrambled number never contains the right one."""

    reward = StandardReward(partial_credit=True)

    def verify(self, task: Task, world: World, reply: str) -> Verdict:
        answer = str(self.truth_of(task).answer)
        passed = reply.strip() == answer
        mentioned = answer in re.findall(r"\d+", reply)
        return Verdict(
            passed=passed,
            score=1.0 if passed else (0.8 if mentioned else 0.0),
            reason=None if passed else "wrong_answer",
            verifier="stock.mentions@1",
        )


class HeldOutBlindEnv(StockEnv):
    """Defect: on the long product lists (11 or more products: the held-out region) the
    verifier checks that the answer *starts with* the reply, so the empty reply (and any
    leading digit) passes: the held-out evaluation reports solves nobody made. Training tasks
    are judged exactly, so every baseline and most red-team samples see an honest verifier."""

    def judge(self, task: Task, reply: str) -> bool:
        truth = self.truth_of(task)
        if HELD_OUT.is_heldout(task.family, task.params):
            return str(truth.answer).startswith(reply.strip())
        return super().judge(task, reply)


class VerbosePaidEnv(StockEnv):
    """Defect: a ``reasoning`` bonus of 0.3 for any reply of 400 characters or more ("it
    showed its work"), paid whatever the reply says: a long wrong answer earns 0.3. The
    oracle, the near miss and the random agent all reply briefly, so none was ever paid."""

    def verify(self, task: Task, world: World, reply: str) -> Verdict:
        if len(reply) >= 400:
            self.shape("reasoning", 0.3)
        return super().verify(task, world, reply)


class CutOffPaidEnv(DigitsEnv):
    """Defect: a reply the token budget cuts off is paid an ``effort`` bonus of 0.3 ("it was
    reasoning at length"), though it is never judged: a policy that writes past the budget
    earns 0.3 on every task. Every baseline replies within the budget (512 tokens here, so
    the verbose near miss's ~150 do too); the staller of ``truncation_accounting`` overruns
    it, but that check read only the ``task`` component."""

    budget = Budget(max_steps=2, max_tokens=512)

    def extra_reward(self) -> dict[str, float]:
        over = self.counters.tokens > (self.budget.max_tokens or 0)
        return {"effort": 0.3} if over else {}


class VerdictCacheEnv(StockEnv):
    """Defect: the verifier memoises its verdicts by reply text alone, on the instance, and
    ``reset`` never clears the memo: once "231" passed a task, it passes every later task
    of that instance. A trainer reuses instances, so a policy that repeats an answer that
    once worked is paid for it on every task after. Each QA episode of a fresh instance,
    and every oracle path, is judged as before."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._memo: dict[str, Verdict] = {}

    def verify(self, task: Task, world: World, reply: str) -> Verdict:
        key = reply.strip()
        if key not in self._memo:
            self._memo[key] = super().verify(task, world, reply)
        return self._memo[key]


FAMILIES = ("stock.count", "stock.recount", "stock.tally", "stock.reserved")


class ReservedFamily(ConstantGoldFamily):
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, StockTruth]:
        prompt, truth = super().build(params, r)
        return prompt.replace("are in stock", "are reserved"), truth


class OneFamilyConstantEnv(StockEnv):
    """Defect: one family of four (``stock.reserved``, its prompt asks how many units "are
    reserved") has 42 as the answer of every task, so "42" solves every task whose prompt
    says "reserved"; the others' answers vary. Over all families the constant is right on a
    quarter of the tasks, far under the constant ceiling, so the constant-answer baseline
    (which pooled the families) passed it."""

    tasks = TaskSource.of(
        [
            StockFamily("stock.count", 1, LEVELS),
            StockFamily("stock.recount", 1, LEVELS),
            StockFamily("stock.tally", 1, LEVELS),
            ReservedFamily("stock.reserved", 1, LEVELS),
        ],
        Split(regions={f: HELD_OUT.regions["stock.count"] for f in FAMILIES}),
    )


class LongEpisodeEnv(StockEnv):
    """Defect: from the sixth step on, the verifier takes any reply ("so long an
    investigation must have found it": the check was meant for a log-reading shortcut), so
    six lookups of anything and then any reply pass every task. The noop and every attack
    reply within three steps; the random agent seldom reaches the sixth step with a reply."""

    def judge(self, task: Task, reply: str) -> bool:
        return self.counters.steps >= 6 or super().judge(task, reply)
