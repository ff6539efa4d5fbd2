"""A word-lookup environment and a fake model for the attacks on harness episodes'
accounting (``test_trl_rollout_parallel_calls_escape_red19.py``,
``test_harness_deep_arguments_unwritten_red19.py``; plain importable code, not a test).

``LookupEnv`` has one tool, ``lookup``, that reads the task's secret word (and echoes its
``plan`` argument); the reply is judged by equality. The fake model (:class:`Model`) plays
a plain tool-calling harness (``tests.serve.harness_agents:tool_agent``): its first turn
calls ``lookup`` with a ``plan`` saying whether this conversation will solve the task (the
conversations of each task alternate: solve, fail, solve, ...), and its second turn replies
with the word read, or gives up. The saboteur's failing conversations call ``lookup`` twice
in their first turn (two tool calls in one answer), so the harness takes two steps on one
model turn; or (``deep_arguments``) send one call whose arguments nest past what an action
may hold.
"""

from __future__ import annotations

import random
import re
import threading
from collections import Counter
from typing import Any

from gymforge.core.env import EnvSpec
from gymforge.core.episode import Budget
from gymforge.core.types import Task
from gymforge.core.verdict import Verdict
from gymforge.kit.tool_env import ToolEnv
from gymforge.tasks import AnswerTruth, ChoiceKnob, ParamSpace, TaskFamily, TaskSource
from gymforge.testing.openai_server.fake import ServedReply, ServedToolCall
from gymforge.tools import tool

WORDS = ("amber", "basalt", "cobalt", "dune", "ember", "fjord")
GIVE_UP = "I could not find it."
WORD = re.compile(rf"\b(?:{'|'.join(WORDS)})-\d+")


class WordFamily(TaskFamily[AnswerTruth]):
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, AnswerTruth]:
        word = f"{params['word']}-{r.randrange(10**6)}"
        return f"Look the secret word up, then reply with it (#{word[-6:]}).", AnswerTruth(
            answer=word
        )


FAMILY = WordFamily("lookup.word", 1, {1: ParamSpace({"word": ChoiceKnob(WORDS)})})


class LookupEnv(ToolEnv[AnswerTruth, dict[str, Any]]):
    """``lookup`` reads the word; the final reply is judged by equality."""

    spec = EnvSpec("lookup-word", "1.0.0")
    tasks = TaskSource.of([FAMILY])
    budget = Budget(max_steps=6, max_tokens=4_096)

    def init_world(self, task: Task, r: random.Random) -> dict[str, Any]:
        return {}

    @tool
    def lookup(self, plan: str = "", notes: Any = None) -> str:
        """Read the secret word.

        Args:
            plan: Anything (echoed).
            notes: Anything.
        """
        return f"{self.truth.answer} (plan: {plan})"

    def verify(self, task: Task, world: dict[str, Any], reply: str) -> Verdict:
        passed = reply.strip() == self.truth_of(task).answer
        return Verdict(passed=passed, reason="ok" if passed else "wrong", facts={})


DEEP = 150
"""How deep the ``deep_arguments`` trick nests its tool call's arguments: past the 100
levels an action may hold (``core.types.MAX_NESTING``), within what JSON parsers take."""


class Model:
    """The fake model (module docstring). ``saboteur`` (True: ``two_calls``) is what its
    failing first turns do: ``two_calls``, two tool calls in one answer; ``deep_arguments``,
    one call whose arguments nest ``DEEP`` lists deep. Counts the conversations it started
    per task prompt (thread-safe)."""

    def __init__(self, saboteur: bool | str) -> None:
        self.saboteur = "two_calls" if saboteur is True else saboteur or None
        self.started: Counter[str] = Counter()
        self.lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> ServedReply | str:
        messages = request.get("messages") or []
        first_user = next(str(m.get("content")) for m in messages if m.get("role") == "user")
        answered = [m for m in messages if m.get("role") == "assistant"]
        if not answered:
            with self.lock:
                n = self.started[first_user]
                self.started[first_user] += 1
            plan = "solve" if n % 2 == 0 else "fail"
            call = ServedToolCall("lookup", {"plan": plan})
            if plan == "fail" and self.saboteur == "two_calls":
                return ServedReply(tool_calls=(call, ServedToolCall("lookup", {"plan": "again"})))
            if plan == "fail" and self.saboteur == "deep_arguments":
                deep = '{"plan": "fail", "notes": ' + "[" * DEEP + "]" * DEEP + "}"
                return ServedReply(tool_calls=(ServedToolCall("lookup", deep),))
            return ServedReply(tool_calls=(call,))
        looked_up = next(str(m.get("content")) for m in messages if m.get("role") == "tool")
        found = WORD.search(looked_up)
        if "plan: fail" in looked_up or found is None:
            return GIVE_UP
        return found.group(0)
