"""``RunSpec``: the one description of a run that every caller hands the runner.

Its first fields say *what* a run is: the environment, the policy, how tasks are drawn,
groups, epochs, retries, where episodes run. They go into ``manifest.json``, and
``--resume`` compares them with the run it continues (``manifest.resume_mismatches``).
The fields after them say how *this invocation* runs it (explicit tasks or jobs, the output
directory, resume, the seal key, the stop-after-failures rule); they are excluded from the
manifest (``model_dump`` leaves them out) and never compared.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from gymforge.rollout.jobs import Job, epoch_jobs, expand

STOP_AFTER_FAILED_TASKS = 2
"""The default ``stop_after_failed_tasks``: see ``gymforge.rollout.runner``."""

Backend = Literal["local", "ray", "redis"]


class RunSpec(BaseModel):
    """What a run was asked to do. ``concurrency`` and ``backend`` never change results; the
    rest may. ``n=None`` runs every row of the dataset once. ``epochs`` repeats the task
    list with rollout indices continuing: epoch ``e`` plays rollouts ``e*group`` to
    ``e*group + group - 1`` of every task.

    A field added to the first block is compared by ``--resume`` automatically; only the
    fields in ``RESUME_MAY_DIFFER`` (and ``RESUME_MAY_GROW``, which may only grow) may
    change. Fields declared with ``exclude=True`` belong to the invocation, not the run.

    The jobs a run plays: ``jobs`` when given (any keys, e.g. a trainer's own rollout
    numbers; ``(task_id, seed)`` pairs are expanded into ``group`` rollouts each), else
    ``tasks`` expanded by ``group`` and ``epochs`` with ``seed`` (see
    ``jobs.epoch_jobs``), else tasks drawn from the environment (``plan.prepare``)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    env: str
    policy: str
    n: int | None = Field(default=None, ge=1)
    seed: int = 0
    split: Literal["train", "heldout", "all"] = "train"
    group: int = Field(default=1, ge=1)
    dataset: str | None = None
    concurrency: int = Field(default=1, ge=1)
    episode_timeout: float | None = None
    max_retries: int = Field(default=2, ge=0)
    backend: Backend = "local"
    epochs: int = Field(default=1, ge=1)

    tasks: list[str] | None = Field(default=None, exclude=True)
    jobs: list[Job] | None = Field(default=None, exclude=True)
    out: Path | None = Field(default=None, exclude=True)
    resume: bool = Field(default=False, exclude=True)
    stop_after_failed_tasks: int | None = Field(default=STOP_AFTER_FAILED_TASKS, exclude=True)
    seal_key: bytes | None = Field(default=None, exclude=True, repr=False)
    dataset_manifests: list[dict[str, Any]] = Field(default_factory=list, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _expand_pairs(cls, data: Any) -> Any:
        """``jobs`` given as ``(task_id, seed)`` pairs: ``group`` rollouts of each."""
        if isinstance(data, dict) and data.get("jobs"):
            jobs = list(data["jobs"])
            if not isinstance(jobs[0], Job):
                data = {
                    **data,
                    "jobs": expand([(t, int(s)) for t, s in jobs], data.get("group", 1)),
                }
        return data

    def job_list(self) -> list[Job]:
        """The jobs this spec plays (see the class docstring); ``tasks`` or ``jobs`` must
        be set (``plan.prepare`` sets ``tasks`` from the environment's draw)."""
        if self.jobs is not None:
            return list(self.jobs)
        if self.tasks is None:
            raise ValueError("RunSpec has neither jobs nor tasks: draw them with plan.prepare")
        return epoch_jobs(self.tasks, self.seed, self.group, self.epochs)

    def summary_config(self) -> dict[str, Any]:
        """What ``summary.json`` and the run seal record of this spec."""
        return {
            "env": self.env,
            "policy": self.policy,
            "seed": self.seed,
            "split": self.split,
            "group": self.group,
            "epochs": self.epochs,
            "datasets": self.dataset_manifests,
            "backend": self.backend,
        }


def recorded_fields() -> list[str]:
    """The ``RunSpec`` fields a manifest records (the run, not the invocation)."""
    return [k for k, f in RunSpec.model_fields.items() if not f.exclude]
