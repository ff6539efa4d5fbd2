"""heldout_exclusion: held-out tasks exist, and no training path can produce one.

The environment must declare a held-out split (whole families or parameter regions). The
held-out split must actually yield tasks, every registered training path
(``gymforge.tasks.TRAINING_PATHS``) must return only tasks whose resolved split is
``train``, and ``Split.check_train`` must refuse every held-out task.

What it cannot catch: a path that hands tasks to a trainer without being registered in
``TRAINING_PATHS``, or held-out tasks that are near-duplicates of training ones.
"""

from __future__ import annotations

from typing import Any

from gymforge.core.errors import UnknownTaskError
from gymforge.qa.checks.common import CheckFailed, NothingToTest, QAOptions, need_tasks
from gymforge.qa.target import QATarget
from gymforge.tasks.source import TRAINING_PATHS
from gymforge.tasks.split import HeldOutError

NAME = "heldout_exclusion"


def run(target: QATarget, opts: QAOptions) -> tuple[str, dict[str, Any]]:
    tasks = need_tasks(target)
    if not tasks.split.declared:
        raise NothingToTest("no held-out split declared (Split families or regions)")
    try:
        heldout = tasks.sample(max(10, opts.episodes), opts.seed + 10, "heldout")
    except UnknownTaskError as err:
        raise CheckFailed(f"a held-out split is declared but yields no task: {err}") from err
    for task_id in heldout:
        task = tasks.resolve(task_id)
        if task.split != "heldout":
            raise CheckFailed(f"{task_id} was sampled as held-out but resolves as {task.split}")
        try:
            tasks.split.check_train(task)
        except HeldOutError:
            continue
        raise CheckFailed(f"Split.check_train accepted the held-out task {task_id}")
    n = max(300, opts.episodes * 10)
    checked = 0
    for path_name, path in TRAINING_PATHS.items():
        for task_id in path(tasks, n, opts.seed + 11):
            if tasks.resolve(task_id).split != "train":
                raise CheckFailed(f"training path {path_name} produced held-out task {task_id}")
            checked += 1
    metrics = {
        "heldout_sampled": len(heldout),
        "training_paths": sorted(TRAINING_PATHS),
        "training_tasks_checked": checked,
    }
    return (
        f"{len(heldout)} held-out tasks refused by check_train; {checked} tasks from "
        f"{len(TRAINING_PATHS)} training path(s) are all train",
        metrics,
    )
