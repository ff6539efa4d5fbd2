"""A tool that ends the episode (``@tool(ends_episode=True)``), through a tiny ``ToolEnv``: a
successful call ends the episode and is judged like a final reply; invalid arguments, a tool
error or a fault do not end it; the flag is on the ``Tool`` and nowhere in the schema the
agent sees; MCP lists the tool like any other; QA's staller never stalls with it."""

from __future__ import annotations

import dataclasses
import json
import random
from typing import Any

import pytest

from gymforge.core.env import EnvSpec
from gymforge.core.episode import Budget
from gymforge.core.errors import EpisodeStateError, ToolError
from gymforge.core.types import Action, Message, Reply, Task, ToolCall
from gymforge.core.verdict import Verdict
from gymforge.kit.tool_env import ToolEnv
from gymforge.qa import QAOptions, QATarget, run_qa
from gymforge.serve.mcp.tools import mcp_tools
from gymforge.serve.meta import EnvCatalog
from gymforge.tasks import AnswerTruth, ChoiceKnob, ParamSpace, TaskFamily, TaskSource
from gymforge.tools import FaultPlan, ToolResult, tool

WORDS = ("amber", "basalt", "cobalt", "dune")


class WordFamily(TaskFamily[AnswerTruth]):
    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, AnswerTruth]:
        return f"Peek, then finish with the word (#{r.randint(1, 999)}).", AnswerTruth(
            answer=params["word"]
        )


FAMILY = WordFamily("ending.word", 1, {1: ParamSpace({"word": ChoiceKnob(WORDS)})})


class FinishEnv(ToolEnv[AnswerTruth, dict[str, Any]]):
    """``finish`` (listed first) ends the episode with its answer; ``peek`` reads the word."""

    spec = EnvSpec("ending-tool", "1.0.0")
    tasks = TaskSource.of([FAMILY])
    budget = Budget(max_steps=6, max_tokens=4_096)

    def init_world(self, task: Task, r: random.Random) -> dict[str, Any]:
        return {"finished": False, "peeks": 0}

    @tool(ends_episode=True)
    def finish(self, answer: str) -> str:
        """Give the final answer; this ends the episode.

        Args:
            answer: The word.
        """
        if not answer.strip():
            raise ToolError("invalid_arguments", "answer must not be empty")
        self.world["finished"] = True
        return answer.strip()

    @tool(ends_episode=True)
    def finish_report(self, answer: str) -> dict[str, Any]:
        """Give the final answer as a report; this ends the episode.

        Args:
            answer: The word.
        """
        self.world["finished"] = True
        return {"answer": answer, "sure": True}

    @tool
    def peek(self) -> str:
        """Read the word."""
        self.world["peeks"] += 1
        return self.truth.answer

    def verify(self, task: Task, world: dict[str, Any], reply: str) -> Verdict:
        passed = reply == self.truth_of(task).answer
        facts = {"reply": reply, "finished": world["finished"]}
        return Verdict(passed=passed, reason="ok" if passed else "wrong", facts=facts)

    def oracle_plan(self, task: Task) -> list[Action]:
        return [
            ToolCall(name="peek", arguments={}),
            ToolCall(name="finish", arguments={"answer": self.truth_of(task).answer}),
        ]


class TalkingFinishEnv(FinishEnv):
    """A dialogue: every reply gets an answer, so only ``finish`` can end the episode."""

    def on_reply(self, text: str) -> list[Message]:
        return [Message(role="user", content="Go on.")]


class CrashingFinishEnv(FinishEnv):
    def verify(self, task: Task, world: dict[str, Any], reply: str) -> Verdict:
        raise RuntimeError("verifier bug")


TASK = FAMILY.task_id(1, 0)


def finish(**args: Any) -> ToolCall:
    return ToolCall(name="finish", arguments=args, call_id="call_9")


def answer() -> str:
    return FinishEnv.tasks.resolve(TASK).truth["answer"]


def test_the_flag_is_on_the_tool_and_not_in_the_schema_the_agent_sees() -> None:
    tools = FinishEnv().toolset.tools
    assert tools["finish"].ends_episode and tools["finish_report"].ends_episode
    assert not tools["peek"].ends_episode
    assert tools["finish"].schema["function"].keys() == tools["peek"].schema["function"].keys()
    assert "ends_episode" not in json.dumps(tools["finish"].schema)


def test_a_successful_call_ends_the_episode_and_is_judged_like_its_reply(make_sync) -> None:
    env = make_sync(FinishEnv)
    env.reset(TASK, 0)
    r = env.step(finish(answer=f" {answer()} "))
    assert r.terminated and not r.truncated
    assert r.info["end_reason"] == "verdict" and r.info["success"] is True
    assert r.info["tool_result"] == {**r.info["tool_result"], "ok": True, "content": answer()}
    assert r.info["verdict"]["facts"] == {"reply": answer(), "finished": True}
    assert r.reward_components["task"] == 1.0
    (msg,) = r.observation.messages
    assert (msg.role, msg.name, msg.tool_call_id) == ("tool", "finish", "call_9")
    assert json.loads(msg.content) == {"ok": True, "result": answer()}
    assert r.observation.data == {"tool_result": r.info["tool_result"], "final": True}
    assert env.env.transcript[-1] == msg
    with pytest.raises(EpisodeStateError):
        env.step(finish(answer=answer()))


def test_the_verdict_is_the_one_the_same_reply_gets(make_sync) -> None:
    by_tool, by_reply = make_sync(FinishEnv), make_sync(FinishEnv)
    by_tool.reset(TASK, 0)
    by_reply.reset(TASK, 0)
    by_reply.env.world["finished"] = True
    wrong = by_tool.step(finish(answer="quartz"))
    replied = by_reply.step(Reply(text="quartz"))
    assert wrong.info["verdict"] == replied.info["verdict"]
    assert wrong.info["success"] is replied.info["success"] is False
    assert wrong.reward_components == replied.reward_components


def test_a_non_string_result_is_judged_as_its_canonical_json(make_sync) -> None:
    env = make_sync(FinishEnv)
    env.reset(TASK, 0)
    r = env.step(ToolCall(name="finish_report", arguments={"answer": "dune"}))
    assert r.terminated
    assert r.info["verdict"]["facts"]["reply"] == '{"answer":"dune","sure":true}'


def test_the_reply_of_a_result() -> None:
    assert ToolResult(tool="t", ok=True, content="as is ").as_reply() == "as is "
    assert ToolResult(tool="t", ok=True).as_reply() == ""
    assert ToolResult(tool="t", ok=True, content=[2, {"b": 1, "a": None}]).as_reply() == (
        '[2,{"a":null,"b":1}]'
    )


@pytest.mark.parametrize(
    ("args", "kind"),
    [
        ({"answer": 3}, "invalid_arguments"),
        ({"answer": "dune", "extra": 1}, "invalid_arguments"),
        ({}, "invalid_arguments"),
        ({"answer": "  "}, "invalid_arguments"),  # the tool's own ToolError
    ],
)
def test_a_failed_call_does_not_end_and_the_agent_may_retry(
    args: dict[str, Any], kind: str, make_sync
) -> None:
    env = make_sync(FinishEnv)
    env.reset(TASK, 0)
    r = env.step(finish(**args))
    assert not r.done and "end_reason" not in r.info and "verdict" not in r.info
    assert r.info["tool_result"]["ok"] is False
    assert r.info["tool_result"]["error"]["kind"] == kind
    assert "final" not in r.observation.data
    assert env.env.world["finished"] is False
    again = env.step(finish(answer=answer()))
    assert again.terminated and again.info["success"] is True


@pytest.mark.parametrize("fault", ["timeout", "permission_denied", "empty"])
def test_a_faulted_call_does_not_end(fault: str, make_sync) -> None:
    env = make_sync(FinishEnv)
    env.reset(TASK, 0)
    env.env.toolset.set_fault_plan(FaultPlan(forced=(("finish", 0, fault),)))
    r = env.step(finish(answer=answer()))
    assert not r.done and "verdict" not in r.info
    assert r.info["fault"] == fault and env.env.world["finished"] is False
    again = env.step(finish(answer=answer()))
    assert again.terminated and again.info["success"] is True


def _crash(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("tool bug")


def test_a_tool_that_crashes_does_not_end(make_sync) -> None:
    env = make_sync(FinishEnv)
    env.reset(TASK, 0)
    toolset = env.env.toolset
    broken = dict(toolset.tools)
    broken["finish"] = dataclasses.replace(broken["finish"], fn=_crash)
    toolset.tools = broken
    r = env.step(finish(answer=answer()))
    assert not r.done and r.info["tool_result"]["error"]["kind"] == "internal"


def test_the_dialogue_hook_is_not_asked_after_an_ending_tool(make_sync) -> None:
    env = make_sync(TalkingFinishEnv)
    env.reset(TASK, 0)
    assert not env.step(Reply(text="hello")).done
    assert env.step(finish(answer=answer())).terminated


def test_a_verifier_crash_on_an_ending_tool_is_a_verifier_error(make_sync) -> None:
    env = make_sync(CrashingFinishEnv)
    env.reset(TASK, 0)
    r = env.step(finish(answer=answer()))
    assert r.terminated and r.info["verifier_error"] is True
    assert r.info["verdict"]["reason"] == "verifier_error" and r.info["success"] is False


def test_mcp_lists_an_ending_tool_like_any_other() -> None:
    catalog = EnvCatalog(FinishEnv, "ending-tool", qa_hooks=False, fault_injection=False)
    listed = {t.name: t for t in mcp_tools(catalog.tools)}
    assert {"finish", "finish_report", "peek"} <= set(listed)
    assert (
        listed["finish"].input_schema
        == FinishEnv().toolset.tools["finish"].schema["function"]["parameters"]
    )


def test_qa_never_stalls_with_an_ending_tool() -> None:
    report = run_qa(
        QATarget.from_factory(FinishEnv), QAOptions(episodes=8), only=["truncation_accounting"]
    )
    (check,) = report.checks
    assert check.passed, check.details
