"""A ``code`` task (a ``calls`` kind: write one function, hidden calls judge it) as a Harbor
task: the agent writes ``/app/solution.py``; each hidden call is one check of the verifier."""

from __future__ import annotations

from gymforge.core.errors import UserError
from gymforge.core.types import Task
from gymforge.integrations.harbor_export.common import (
    BASE_IMAGE,
    heredoc_file,
    task_toml,
    verifier_files,
)

SOLUTION = "solution.py"


def render_code(task: Task) -> dict[str, str | bytes]:
    truth = task.truth
    if truth.get("kind") != "calls":
        raise UserError(
            f"{task.task_id}: only function-call code tasks export to Harbor (this one is "
            f"{truth.get('kind')!r})"
        )
    entry = str(truth["entry_point"])
    tests = truth["tests"]
    assert isinstance(tests, list)
    spec = {
        "kind": "code",
        "workspace": "/app",
        "solution": SOLUTION,
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
    prompt = task.prompt.replace(
        "Answer with the complete function in a ```python code block.",
        f"Write the complete function in /app/{SOLUTION} (Python), then reply that you are done.",
    )
    files: dict[str, str | bytes] = {
        "instruction.md": prompt + "\n",
        "task.toml": task_toml(task, "code"),
        "environment/Dockerfile": f"FROM {BASE_IMAGE}\nWORKDIR /app\n",
        **verifier_files(spec),
    }
    reference = truth.get("reference")
    if isinstance(reference, str):
        files["solution/solve.sh"] = "#!/bin/bash\n" + heredoc_file(f"/app/{SOLUTION}", reference)
    return files
