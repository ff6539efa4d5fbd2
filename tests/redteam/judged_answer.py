"""A planted environment judged by a ``RubricJudge`` and the policies that play it (for
``test_rubric_judge_stalled_by_answer_red19.py``; plain importable code, not a test).

``JudgedEnv`` asks for a word (its prompt holds a hint) and has a rubric judge grade the
reply against it. Its judge model (:class:`JudgeModel`) rates a reply holding the word 10,
any other 1, and, as a hosted judge behind a moderation filter or a judge talked into
reasoning at length would, fails on a reply holding a marker: ``STALL`` runs every attempt
past the call timeout (``PolicyTimedOut``, what the ``openai:`` policy raises then),
``REFUSE`` is refused (``PolicyRequestRejected``, a 400), ``FLAKY`` is answered at length
behind a gateway whose read timeout is near the call timeout, so its asks end in turn as the
gateway's 502 (``PolicyServerError``) and as a stall. ``dead`` makes it stall on every
request (a judge server that is down). The two task families alternate in
``TaskSource.sample``.

``half_policy`` answers the ``judged.solve`` tasks right and, on the ``judged.fail`` ones,
``miss``: a wrong word, or the marker.
"""

from __future__ import annotations

import random
import re
from typing import Any

from planted_judge_crash import HalfPolicy

from gymforge.core.env import EnvSpec
from gymforge.core.episode import Budget
from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.core.types import Observation, Reply, Task
from gymforge.core.verdict import Verdict
from gymforge.kit.tool_env import ToolEnv
from gymforge.rollout.server import PolicyRequestRejected, PolicyServerError, PolicyTimedOut
from gymforge.tasks import AnswerTruth, ChoiceKnob, ParamSpace, TaskFamily, TaskSource
from gymforge.verify.llm_judge import DEFAULT_RUBRIC, RubricJudge

STALL = "<<a text the judge answers at length>>"
REFUSE = "<<a text the judge's moderation refuses>>"
FLAKY = "<<a text the judge answers at length behind a gateway>>"
_CANDIDATE = re.compile(r"<(candidate-[0-9a-f]+)>\n(.*)\n</\1>", re.S)
_REFERENCE = re.compile(r"<reference>\n(.*)\n</reference>", re.S)
WORDS = ("amber", "basalt", "cobalt", "dune", "ember", "fjord")


class WordFamily(TaskFamily[AnswerTruth]):
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, AnswerTruth]:
        word = f"{params['word']}-{r.randrange(10**6)}"
        return f"Reply with the secret word. Hint: it is {word!r}.", AnswerTruth(answer=word)


SOLVE = WordFamily("judged.solve", 1, {1: ParamSpace({"word": ChoiceKnob(WORDS)})})
FAIL = WordFamily("judged.fail", 1, {1: ParamSpace({"word": ChoiceKnob(WORDS)})})


class JudgeModel:
    """The judge model (module docstring); ``dead``: every request stalls."""

    name = checkpoint = "planted-judge"
    dead = False
    flaky_asks = 0
    """Requests holding ``FLAKY`` seen so far, by every instance (one is made per request)."""

    async def start(self, ctx: EpisodeContext) -> None:
        return None

    async def act(self, observation: Observation) -> PolicyTurn:
        prompt = observation.text()
        if self.dead or STALL in prompt:
            raise PolicyTimedOut("judge: failed 2 attempts; last: no response within 1.0 s")
        if FLAKY in prompt:
            JudgeModel.flaky_asks += 1
            if JudgeModel.flaky_asks % 2:
                raise PolicyServerError("judge: failed 2 attempts; last: 502", status=502)
            raise PolicyTimedOut("judge: failed 2 attempts; last: no response within 1.0 s")
        if REFUSE in prompt:
            raise PolicyRequestRejected("judge refused the request (400): flagged", status=400)
        answer = _CANDIDATE.search(prompt)
        reference = _REFERENCE.search(prompt)
        right = answer and reference and reference.group(1) in answer.group(2)
        score = 10 if right else 1
        text = (
            f'{{"criteria": {{"correctness": {{"score": {score}, "reason": "."}}, '
            f'"completeness": {{"score": {score}, "reason": "."}}}}}}'
        )
        return PolicyTurn(Reply(text=text), capture_level="text", text=text)


class DeadJudgeModel(JudgeModel):
    dead = True


class JudgedEnv(ToolEnv[AnswerTruth, dict[str, Any]]):
    """One reply, graded by a rubric judge against the word."""

    spec = EnvSpec("planted-rubric-judge", "1.0.0")
    tasks = TaskSource.of([SOLVE, FAIL])
    budget = Budget(max_steps=2, max_tokens=4_096)
    judge_model: type[JudgeModel] = JudgeModel

    def init_world(self, task: Task, r: random.Random) -> dict[str, Any]:
        return {}

    async def verify(self, task: Task, world: dict[str, Any], reply: str) -> Verdict:
        judge = RubricJudge(self.judge_model, DEFAULT_RUBRIC, model="planted-judge")
        return await judge.ajudge("What is the secret word?", reply, self.truth_of(task).answer)


class DeadJudgeEnv(JudgedEnv):
    judge_model = DeadJudgeModel


def half_policy(name: str, miss: str) -> HalfPolicy:
    """Right on ``judged.solve`` tasks; ``miss`` on the ``judged.fail`` ones."""
    return HalfPolicy(name, miss, "judged.solve")
