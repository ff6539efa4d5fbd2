"""A stand-in for the model in the mini-swe-agent demo and tests: it answers as
mini-swe-agent's tool-calling models do (one ``bash`` tool call a turn), playing a fixed
list of shell commands, then the submit command.

:func:`fix_commands` writes an ``swe`` task's reference fix as shell commands (what an agent
that solved it would type): the demo's stand-in model reads the answer from the task, so it
shows the machinery, not a model's skill.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Sequence
from typing import Any

from gymforge.envs.swe import SweEnv
from gymforge.testing.openai_server.fake import ServedReply, ServedToolCall

SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
EDIT = (
    "import json, sys; p, old, new = json.loads(sys.argv[1]); s = open(p).read(); "
    "assert s.count(old) == 1, 'old text not found once'; open(p, 'w').write(s.replace(old, new))"
)


def fix_commands(task_id: str) -> list[str]:
    """The ``swe`` task's reference fix as shell commands (``python3 -c`` edits, ``printf``
    for new files, ``rm``)."""
    env = SweEnv()
    truth = env.truth_of(env.tasks.resolve(task_id))
    out = []
    for step in truth.fix:
        if step.op == "edit":
            payload = json.dumps([step.path, step.old, step.new])
            out.append(f"python3 -c {shlex.quote(EDIT)} {shlex.quote(payload)}")
        elif step.op == "create":
            out.append(f"printf %s {shlex.quote(step.new)} > {shlex.quote(step.path)}")
        else:
            out.append(f"rm -- {shlex.quote(step.path)}")
    return out


def bash_script(
    commands: Sequence[str] | Callable[[dict[str, Any]], Sequence[str]],
) -> Callable[[dict[str, Any]], ServedReply]:
    """A test-server responder that answers turn k with a ``bash`` call of ``commands[k]``,
    then submits. ``commands`` may be a function of the request (to pick an episode's)."""

    def respond(request: dict[str, Any]) -> ServedReply:
        script = [*(commands(request) if callable(commands) else commands), SUBMIT]
        k = sum(m.get("role") == "assistant" for m in request.get("messages", []))
        call = ServedToolCall("bash", {"command": script[min(k, len(script) - 1)]})
        return ServedReply(content=f"THOUGHT: step {k + 1}.", tool_calls=(call,))

    return respond
