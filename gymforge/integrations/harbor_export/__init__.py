"""gymforge tasks out as Harbor task directories: ``gymforge tasks export ENV --format harbor``.

Supported: ``swe`` (``swe.py``: the generated repository as the environment, its hidden checks
as the verifier, the reference fix as the solution) and ``code`` (``code.py``: the function
to write in ``/app/solution.py``, the hidden calls as the verifier, the reference as the
solution). Both verifiers are ``judge_script.py``, written into each task, which judges on
plain data as gymforge's own judge does. ``harbor:DIR`` of an export reads the tasks back
(``docs/harbor.md``: the round trip gives the same verdicts on the oracle and wrong answers).
"""

from __future__ import annotations

import re
from pathlib import Path

from gymforge.core.errors import UserError
from gymforge.core.types import Task
from gymforge.integrations.harbor_export.common import write_tree

EXPORTERS = ("swe", "code")


def dir_name(task_id: str) -> str:
    """A task id as a Harbor task directory name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", task_id).strip("-.")[:120]


def render(env_id: str, task: Task) -> dict[str, str | bytes]:
    """The files of ``task``'s Harbor directory."""
    if env_id == "swe":
        from gymforge.integrations.harbor_export.swe import render_swe

        return render_swe(task)
    if env_id == "code":
        from gymforge.integrations.harbor_export.code import render_code

        return render_code(task)
    raise UserError(f"tasks export --format harbor supports {', '.join(EXPORTERS)}, not {env_id!r}")


def export_tasks(env_id: str, tasks: list[Task], out: Path) -> list[Path]:
    """Write each task's directory under ``out`` (refused when one is already there)."""
    if env_id not in EXPORTERS:
        raise UserError(
            f"tasks export --format harbor supports {', '.join(EXPORTERS)}, not {env_id!r}"
        )
    written = []
    for task in tasks:
        target = out / dir_name(task.task_id)
        if target.exists():
            raise UserError(f"{target} exists; export into an empty directory")
        write_tree(target, render(env_id, task))
        written.append(target)
    return written
