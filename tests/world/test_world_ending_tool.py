"""An episode-ending tool in a world environment: its action-log event is in ``self.log``
before ``verify`` runs (``ToolEnv.on_tool_result``), so process rules and verifiers that
read the log see the call that ended the episode."""

from __future__ import annotations

import asyncio
from typing import Any

from notes_world import NotesEnv

from gymforge.core import Task, ToolCall
from gymforge.tools import tool
from gymforge.verify import Verdict
from gymforge.world import WorldDB


class FinishingNotes(NotesEnv):
    seen: list[list[str]]

    @tool(ends_episode=True)
    def finish(self, summary: str) -> str:
        """Say what you did; this ends the episode.

        Args:
            summary: What was done.
        """
        return summary

    def verify(self, task: Task, world: WorldDB, reply: str) -> Verdict:
        events = [e.name for e in self.log]
        type(self).seen.append(events)
        return super().verify(task, world, reply)


def test_the_ending_call_is_logged_before_it_is_judged() -> None:
    FinishingNotes.seen = []

    async def play() -> list[Any]:
        env = FinishingNotes()
        task_id = env.tasks.sample(1, 0)[0]
        await env.reset(task_id, 0)
        texts = env.truth_of(env.tasks.resolve(task_id)).texts
        steps = []
        for i, t in enumerate(texts):
            add = ToolCall(name="add_note", arguments={"text": t, "idempotency_key": f"k{i}"})
            steps.append(await env.step(add))
        steps.append(await env.step(ToolCall(name="finish", arguments={"summary": 3})))
        steps.append(await env.step(ToolCall(name="finish", arguments={"summary": "added"})))
        return steps

    steps = asyncio.run(play())
    bad, last = steps[-2], steps[-1]
    assert not bad.done and bad.info["tool_result"]["error"]["kind"] == "invalid_arguments"
    assert last.terminated and last.info["end_reason"] == "verdict"
    assert last.info["verdict"]["passed"] is True, last.info["verdict"]
    [events] = FinishingNotes.seen
    assert events[-2:] == ["tool.finish", "tool.finish"]  # the refused call, then this one
    assert events.count("tool.add_note") == len(steps) - 2
