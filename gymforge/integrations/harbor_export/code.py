"""A ``code`` or ``code-agent`` task (a ``calls`` kind: write one function, hidden calls judge
it) as a Harbor task: the agent writes ``/app/solution.py``; the hidden calls are the
verifier, scored as the ``code`` environment scores them (``reward.json``: ``task``,
``tests_passed``, ``timeout``, ``crash``, the weights of ``CodeReward``).

``code-agent`` adds what its tools gave the agent, as files of the image: the starting
workspace (``/app``, empty, as ``code-agent`` starts it) and its ``run_visible_tests`` as a
command, ``python3 /opt/gymforge/judge.py --report``: the same verifier, given only the
visible tests (``visible_truth``: the cases the statement shows). ``run_code`` is the shell.
"""

from __future__ import annotations

import json
from typing import Any

from gymforge.core.errors import UserError
from gymforge.core.types import Task
from gymforge.envs.code.agent import visible_truth
from gymforge.envs.code.env import CodeReward
from gymforge.envs.code.truth import CodeTruth
from gymforge.integrations.harbor_export.common import (
    BASE_IMAGE,
    heredoc_file,
    judge_limits,
    judge_source,
    task_toml,
    verifier_files,
)

SOLUTION = "solution.py"
TOOLS = "/opt/gymforge"
ASK = "Answer with the complete function in a ```python code block."


def reward_weights(reward: CodeReward | None = None) -> dict[str, float]:
    """``CodeReward``'s weights as ``spec.json`` carries them."""
    r = reward or CodeReward()
    return {
        "task": r.base.task_weight,
        "tests_passed": r.tests_weight,
        "timeout": r.timeout_penalty,
        "crash": r.crash_penalty,
    }


def calls_spec(truth: dict[str, Any]) -> dict[str, Any]:
    """The verifier's ``spec.json`` for a ``calls`` truth (plain data)."""
    entry, tests = str(truth["entry_point"]), truth["tests"]
    return {
        "kind": "code",
        "workspace": "/app",
        "solution": SOLUTION,
        "limits": judge_limits(truth, len(tests)),
        "reward": reward_weights(),
        "checks": [
            {
                "name": f"call_{i}",
                "target": f"solution:{entry}",
                "args": t["args"],
                "kwargs": {},
                "expected": t["expected"],
            }
            for i, t in enumerate(tests)
        ],
    }


def render_code(task: Task, env_id: str = "code") -> dict[str, str | bytes]:
    truth = task.truth
    if truth.get("kind") != "calls":
        raise UserError(
            f"{task.task_id}: only function-call code tasks export to Harbor (this one is "
            f"{truth.get('kind')!r}: its tests are Python or stdio code that gymforge runs "
            "beside the candidate, which the exported verifier does not carry)"
        )
    do = f"Write the complete function in /app/{SOLUTION} (Python), then reply that you are done."
    dockerfile = f"FROM {BASE_IMAGE}\nWORKDIR /app\n"
    files: dict[str, str | bytes] = {}
    if env_id == "code-agent":
        visible = visible_truth(CodeTruth.model_validate(truth), task.prompt)
        if visible is not None:
            do += (
                " You may run any program in the shell; `python3 /opt/gymforge/judge.py "
                "--report` runs /app/solution.py against the examples above."
            )
            files["environment/gymforge/judge.py"] = judge_source()
            files["environment/gymforge/spec.json"] = (
                json.dumps(calls_spec(visible), indent=1, sort_keys=True) + "\n"
            )
            dockerfile += f"COPY gymforge/ {TOOLS}/\n"
    files |= {
        "instruction.md": task.prompt.replace(ASK, do) + "\n",
        "task.toml": task_toml(task, env_id),
        "environment/Dockerfile": dockerfile,
        **verifier_files(calls_spec(truth)),
    }
    reference = truth.get("reference")
    if isinstance(reference, str):
        files["solution/solve.sh"] = "#!/bin/bash\n" + heredoc_file(f"/app/{SOLUTION}", reference)
    return files
