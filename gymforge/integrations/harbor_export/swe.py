"""A ``swe`` task as a Harbor task: the repository in ``/app``, the target issue (with its
comments) as the instruction, the hidden checks (generated repositories) or the hidden test
command (task files) with ``swe``'s drop rules as the verifier (``judge_script``), the
reference fix as ``solve.sh``."""

from __future__ import annotations

import json
import shlex

from gymforge.core.types import Task
from gymforge.envs.swe.build import RUNNER_FILES, SHADOWED, TEST_DIRS
from gymforge.envs.swe.judging import HIDDEN_LIMITS
from gymforge.envs.swe.runner import BOOT_FILES, HIDDEN_COMMAND
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
    visible = (
        f" The repository's tests run with `{truth.visible_command}`."
        if truth.mode == "command"
        else ""
    )
    return (
        f"Resolve issue #{issue.number} of the repository in /app.\n\n"
        f"# {issue.title}\n\n{issue.body}{comments}\n\n"
        "Make the smallest correct change to the source. Tests, test configuration and CI "
        f"files are protected: changing them fails the task.{visible} Reply when you are "
        "done.\n"
    )


def _spec(truth: SweTruth) -> dict[str, object]:
    spec: dict[str, object] = {
        "kind": "swe",
        "workspace": "/app",
        "protected": truth.protected,
        "test_dirs": sorted(TEST_DIRS),
        "runner_files": sorted(RUNNER_FILES),
        "shadowed": sorted(SHADOWED),
    }
    if truth.mode == "checks":
        spec["checks"] = [c.model_dump(mode="json") for c in truth.checks]
        spec["limits"] = judge_limits({}, 1)
        return spec
    lim = HIDDEN_LIMITS
    return spec | {
        "kind": "swe-command",
        "argv": shlex.split(truth.hidden_command),
        "hidden_paths": sorted(truth.hidden_files),
        "hidden_dirs": sorted({p.rsplit("/", 1)[0] for p in truth.hidden_files if "/" in p}),
        "limits": {
            "wall_time": lim.wall_time,
            "cpu_time": lim.cpu,
            "call_timeout": lim.wall_time,
            "memory_bytes": lim.memory_bytes,
        },
    }


def render_swe(task: Task) -> dict[str, str | bytes]:
    """A ``checks`` task (generated repositories) or a task file's ``command`` task: its
    hidden tests (``tests/hidden``), ``swe``'s hidden-run runner (``tests/runner.py``, its
    boot files in ``tests/boot``) and the hidden command, run as ``swe`` runs them."""
    truth = SweTruth.model_validate(task.truth)
    files: dict[str, str | bytes] = {
        "instruction.md": _instruction(truth),
        "task.toml": task_toml(task, "swe"),
        "environment/Dockerfile": f"FROM {BASE_IMAGE}\nWORKDIR /app\nCOPY repo/ /app/\n",
        **verifier_files(_spec(truth)),
    }
    for path, text in truth.files.items():
        files[f"environment/repo/{path}"] = text
        files[f"tests/original/{path}"] = text
    if truth.mode == "command":
        files["tests/runner.py"] = HIDDEN_COMMAND
        files |= {f"tests/hidden/{p}": t for p, t in truth.hidden_files.items()}
        files |= {f"tests/boot/{p}": t for p, t in BOOT_FILES.items()}
    if truth.fix:
        steps = json.dumps([s.model_dump(mode="json") for s in truth.fix])
        files["solution/solve.sh"] = (
            "#!/bin/bash\nset -e\n"
            + heredoc_file("/tmp/gymforge_fix.json", steps)
            + heredoc_file("/tmp/gymforge_fix.py", APPLY_FIX)
            + "python3 /tmp/gymforge_fix.py < /tmp/gymforge_fix.json\n"
        )
    return files
