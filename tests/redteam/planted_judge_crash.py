"""A planted environment whose judge raises on a marker in the agent's answer, and the policy
that exploits it (for ``test_success_crashes_the_judge.py``; the CLI imports this module, so
it is plain importable code, not a test).

``CrashEnv`` asks for a word and judges the reply by equality, except that its verifier
raises when the reply contains ``MARKER``: the stand-in for every judge a crafted answer can
break (a file name the swe judge chokes on, an expression a scorer cannot parse). Its two
task families alternate in ``TaskSource.sample``, so any even ``-n`` draws as many tasks of
each.

``half_saboteur`` answers the ``crash.solve`` tasks right and, on the ``crash.fail`` tasks,
where it has no answer, emits the marker instead of a wrong word. ``half_honest`` is the same
policy without the trick: a wrong word where the saboteur sends the marker.
"""

from __future__ import annotations

import random
from typing import Any

from gymforge.core.env import EnvSpec
from gymforge.core.episode import Budget
from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.core.types import Action, Observation, Reply, Task
from gymforge.core.verdict import Verdict
from gymforge.kit.tool_env import ToolEnv
from gymforge.tasks import AnswerTruth, ChoiceKnob, ParamSpace, TaskFamily, TaskSource

MARKER = "<<judge-crash>>"
WORDS = ("amber", "basalt", "cobalt", "dune", "ember", "fjord")
PROMPT = "Reply with the secret word. Hint: it is {word!r}."


class WordFamily(TaskFamily[AnswerTruth]):
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, AnswerTruth]:
        word = f"{params['word']}-{r.randrange(10**6)}"  # answers differ from task to task
        return PROMPT.format(word=word), AnswerTruth(answer=word)


SOLVE = WordFamily("crash.solve", 1, {1: ParamSpace({"word": ChoiceKnob(WORDS)})})
FAIL = WordFamily("crash.fail", 1, {1: ParamSpace({"word": ChoiceKnob(WORDS)})})


class CrashEnv(ToolEnv[AnswerTruth, dict[str, Any]]):
    """One reply, judged by equality; the judge raises on ``MARKER`` (the planted bug)."""

    spec = EnvSpec("planted-judge-crash", "1.0.0")
    tasks = TaskSource.of([SOLVE, FAIL])
    budget = Budget(max_steps=2, max_tokens=4_096)

    def init_world(self, task: Task, r: random.Random) -> dict[str, Any]:
        return {}

    def verify(self, task: Task, world: dict[str, Any], reply: str) -> Verdict:
        if MARKER in reply:
            raise ValueError(f"cannot parse the reply {reply[:40]!r}")
        passed = reply.strip() == self.truth_of(task).answer
        return Verdict(passed=passed, reason="ok" if passed else "wrong", facts={})

    def oracle_plan(self, task: Task) -> list[Action]:
        return [Reply(text=self.truth_of(task).answer)]


class HalfPolicy:
    """Right on the tasks of family ``solve`` (``crash.solve``), whose prompt quotes the
    word to answer; on the others, ``miss`` instead."""

    checkpoint = "planted"

    def __init__(self, name: str, miss: str, solve: str = "crash.solve") -> None:
        self.name = name
        self.miss = miss
        self.solve = solve + "/"
        self.solves = False

    async def start(self, ctx: EpisodeContext) -> None:
        self.solves = ctx.task_id.startswith(self.solve)

    async def act(self, observation: Observation) -> PolicyTurn:
        prompt = observation.messages[-1].content
        word = prompt.rsplit("'", 2)[-2]
        return PolicyTurn(Reply(text=word if self.solves else self.miss))


def half_saboteur() -> HalfPolicy:
    return HalfPolicy("half_saboteur", f"no idea {MARKER}")


def half_honest() -> HalfPolicy:
    return HalfPolicy("half_honest", "no idea")
