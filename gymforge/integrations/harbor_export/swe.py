"""A ``swe`` task (``checks`` mode) as a Harbor task: the repository in ``/app``, the target
issue (with its comments) as the instruction, the hidden checks and ``swe``'s drop rules as
the verifier (``judge_script``), the reference fix as ``solve.sh``."""

from __future__ import annotations

import json

from gymforge.core.errors import UserError
from gymforge.core.types import Task
from gymforge.envs.swe.build import RUNNER_FILES, SHADOWED, TEST_DIRS
from gymforge.envs.swe.truth import SweTruth
from gymforge.integrations.harbor_export.common import (
    BASE_IMAGE,
    heredoc_file,
    judge_limits,
    task_toml,
    verifier_files,
)

APPLY_FIX = """import json, pathlib, sys
for step in json.loads(sys.stdin.read()):
    p = pathlib.Path("/app") / step["path"]
    if step["op"] == "delete":
        p.unlink()
    elif step["op"] == "create":
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(step["new"])
    else:
        text = p.read_text()
        assert text.count(step["old"]) == 1, step["path"]
        p.write_text(text.replace(step["old"], step["new"]))
"""


def _instruction(truth: SweTruth) -> str:
    issue = next(i for i in truth.issues if i.number == truth.target_issue)
    comments = "".join(f"\n\n**{c.author}:** {c.body}" for c in issue.comments)
    return (
        f"Resolve issue #{issue.number} of the repository in /app.\n\n"
        f"# {issue.title}\n\n{issue.body}{comments}\n\n"
        "Make the smallest correct change to the source. Tests, test configuration and CI "
        "files are protected: changing them fails the task. Reply when you are done.\n"
    )


def render_swe(task: Task) -> dict[str, str | bytes]:
    truth = SweTruth.model_validate(task.truth)
    if truth.mode != "checks":
        raise UserError(f"{task.task_id}: only swe tasks judged by checks export to Harbor")
    spec = {
        "kind": "swe",
        "workspace": "/app",
        "protected": truth.protected,
        "test_dirs": sorted(TEST_DIRS),
        "runner_files": sorted(RUNNER_FILES),
        "shadowed": sorted(SHADOWED),
        "checks": [c.model_dump(mode="json") for c in truth.checks],
        "limits": judge_limits({}, 1),
    }
    files: dict[str, str | bytes] = {
        "instruction.md": _instruction(truth),
        "task.toml": task_toml(task, "swe"),
        "environment/Dockerfile": f"FROM {BASE_IMAGE}\nWORKDIR /app\nCOPY repo/ /app/\n",
        **verifier_files(spec),
    }
    for path, text in truth.files.items():
        files[f"environment/repo/{path}"] = text
        files[f"tests/original/{path}"] = text
    steps = json.dumps([s.model_dump(mode="json") for s in truth.fix])
    files["solution/solve.sh"] = (
        "#!/bin/bash\nset -e\n"
        + heredoc_file("/tmp/gymforge_fix.json", steps)
        + heredoc_file("/tmp/gymforge_fix.py", APPLY_FIX)
        + "python3 /tmp/gymforge_fix.py < /tmp/gymforge_fix.json\n"
    )
    return files
