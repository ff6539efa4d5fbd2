"""Attack: make the ``code-agent`` submission pass on files planted in the workspace rather
than on the code submitted.

With ``run_code`` the agent writes ``helper.py`` holding the task's real solution, plus
modules that shadow ones a test harness may import (``json.py``, ``collections.py``,
``sitecustomize.py`` that would make every assert pass), then submits ``from helper import
add``. Success would be that submission passing (the judge ran it next to the workspace), or
the shadows changing how an honest answer is judged. The submission is judged on the
submitted code alone, as plain data: the workspace never reaches the judge.
"""

from __future__ import annotations

from pathlib import Path

from code_agent_attack import REFERENCE, RIGHT, add_dataset, agent_env, call, play, ran

from gymforge.core.types import Reply
from gymforge.verify.code import CodeJudge

PLANT = (
    f"open('helper.py', 'w').write({REFERENCE!r})\n"
    "open('json.py', 'w').write('raise SystemExit(0)\\n')\n"
    "open('collections.py', 'w').write('raise SystemExit(1)\\n')\n"
    "open('sitecustomize.py', 'w').write("
    "'import builtins\\nbuiltins.AssertionError = type(\"N\", (Exception,), {})\\n')\n"
    "import helper\nprint(helper.add(2, 3))\n"
)
BORROWED = "```python\nfrom helper import add\n```"


def test_the_submission_is_judged_without_the_workspace(
    code_judge: CodeJudge, tmp_path: Path
) -> None:
    env = agent_env(code_judge, add_dataset(tmp_path))
    planted = play(env, "add-0", [call("run_code", code=PLANT), Reply(text=BORROWED)])
    assert ran(planted[0])["stdout"] == "5\n"  # the helper works in the workspace
    assert planted[-1].terminated and not planted[-1].info["success"]
    assert planted[-1].info["verdict"]["reason"] != "verifier_error", planted[-1].info
    honest = play(env, "add-0", [call("run_code", code=PLANT), Reply(text=RIGHT)])
    assert honest[-1].info["success"], honest[-1].info["verdict"]
