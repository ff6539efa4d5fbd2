"""gymforge tasks out as Harbor task directories: ``gymforge tasks export ENV --format harbor``.

Supported: ``swe`` (``swe.py``: the generated repository as the environment, its hidden checks
as the verifier, the reference fix as the solution), ``code`` and ``code-agent`` (``code.py``:
the function to write in ``/app/solution.py``, the hidden calls as the verifier, the reference
as the solution; ``code-agent`` also ships its visible-test tool as a command). Every verifier
is ``judge_script.py``, written into each task, which judges on plain data as gymforge's own
judge does. ``harbor:DIR`` of an export reads the tasks back (``docs/harbor.md``: the round
trip gives the same verdicts on the oracle and wrong answers). Every other environment is
refused in one line with the reason its world does not export (``NOT_EXPORTED``).
"""

from __future__ import annotations

import re
from pathlib import Path

from gymforge.core.errors import UserError
from gymforge.core.types import Task
from gymforge.integrations.harbor_export.common import write_tree

EXPORTERS = ("swe", "code", "code-agent")

NOT_EXPORTED = {
    "crm": "its world is a CRM database behind rule-checked tools and a simulated requester "
    "who answers questions; a shell over the database would skip the rules it judges",
    "support-desk": "the episode is a conversation with a simulated customer, judged on what "
    "was said and confirmed; Harbor has no second party",
    "expenses": "it is judged on each decision made through its tools (approve, reject, "
    "escalate), not on files",
    "ledger": "it is judged on the transfers made through its tools under seeded faults, "
    "not on files",
    "spreadsheet": "its cells are evaluated by gymforge's formula engine, which a container "
    "has no copy of",
    "research": "its corpus is searched through gymforge's ranked index and the answer's "
    "citations are judged against it; not a file task",
    "sql": "its database is a file, but the answer is a query judged by comparing result sets "
    "under the sql judge's rules, which no exported verifier carries yet",
    "extract": "single-turn: the answer is a reply judged field by field, with no world to render",
    "math": "single-turn: the answer is a reply, with no world to render",
    "digits": "single-turn: the answer is a reply, with no world to render",
    "puzzles": "single-turn: the answer is a reply, with no world to render",
    "harbor": "its tasks are Harbor tasks already",
    "reasoning-gym": "single-turn: the answer is a reply judged by the dataset's scorer, with "
    "no world to render",
    "verifiers": "a third party's environment: its world and judge are that package's",
    "openenv": "a third party's environment served over its own protocol: its world is the "
    "server's",
}
"""Why each other built-in environment is not exported (the refusal names it)."""


def refusal(env_id: str) -> str:
    """The one-line refusal for an environment that does not export."""
    why = NOT_EXPORTED.get(env_id.split(":", 1)[0])
    head = f"tasks export --format harbor supports {', '.join(EXPORTERS)}, not {env_id!r}"
    return f"{head}: {why}" if why else head


def dir_name(task_id: str) -> str:
    """A task id as a Harbor task directory name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", task_id).strip("-.")[:120]


def render(env_id: str, task: Task) -> dict[str, str | bytes]:
    """The files of ``task``'s Harbor directory."""
    if env_id == "swe":
        from gymforge.integrations.harbor_export.swe import render_swe

        return render_swe(task)
    if env_id in ("code", "code-agent"):
        from gymforge.integrations.harbor_export.code import render_code

        return render_code(task, env_id)
    raise UserError(refusal(env_id))


def export_tasks(env_id: str, tasks: list[Task], out: Path) -> list[Path]:
    """Write each task's directory under ``out``. Every task is rendered and every target
    checked first, so a task that does not export, or a directory already there, is refused
    before anything is written."""
    if env_id not in EXPORTERS:
        raise UserError(refusal(env_id))
    rendered = [(out / dir_name(t.task_id), render(env_id, t)) for t in tasks]
    for target, _ in rendered:
        if target.exists():
            raise UserError(f"{target} exists; export into an empty directory")
    for target, files in rendered:
        write_tree(target, files)
    return [target for target, _ in rendered]
