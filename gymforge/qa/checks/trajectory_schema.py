"""trajectory_schema: every record validates against the exported JSON Schema.

Episodes from the oracle and the random policy go through the real runner into a real
``trajectories.jsonl``. Every line must validate against ``gymforge schema trajectory``
(checked with ``jsonschema``, independently of the pydantic models the writer uses), carry
the environment's id, version and renderer version and a policy checkpoint, and every
episode's digest chain must verify. Then the renderer is compared with the golden
renderings of its ``renderer_version`` (``gymforge.qa.golden``): a renderer changed without
a version bump fails, naming the task, the value and the re-record command; an environment
with no golden passes with a warning that says how to record one.

What it cannot catch: a renderer change on tasks outside the golden set, or one that only
shows after the first step; a golden recorded from an already-wrong renderer; and stamps
that are wrong in a way the schema allows (a valid but stale version string).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from gymforge.core.errors import IntegrityError
from gymforge.qa import golden
from gymforge.qa.checks.common import CheckFailed, QAOptions, jobs, run_async
from gymforge.qa.target import QATarget
from gymforge.rollout.executors import LocalExecutor
from gymforge.rollout.jobs import expand
from gymforge.rollout.runner import run as run_jobs
from gymforge.rollout.scripted import scripted_policy
from gymforge.rollout.spec import RunSpec
from gymforge.trajectory.io import read_episodes, verify_chain
from gymforge.trajectory.schema import trajectory_json_schema

NAME = "trajectory_schema"


def run(target: QATarget, opts: QAOptions) -> tuple[str, dict[str, Any]]:
    validator = Draft202012Validator(trajectory_json_schema())
    pairs = jobs(target, max(4, opts.episodes // 3), opts.seed + 9, "all")
    lines = episodes = 0
    spec = target.spec
    with tempfile.TemporaryDirectory() as tmp:
        for policy in ["random"] + (["oracle"] if target.has_oracle else []):
            out = Path(tmp) / policy
            try:
                plan = RunSpec(env=spec.id, policy=policy, jobs=expand(pairs), out=out)
                executor = LocalExecutor(target.factory, scripted_policy(policy))
                result = run_async(run_jobs(plan, executor))
            except IntegrityError as err:
                raise CheckFailed(f"the writer refused a record: {err}") from err
            if result.errors:
                raise CheckFailed(f"{len(result.errors)} episodes failed: {result.errors[0]}")
            path = out / "trajectories.jsonl"
            with open(path, encoding="utf-8") as fh:
                for n, line in enumerate(fh, 1):
                    record = json.loads(line)
                    error = next(iter(validator.iter_errors(record)), None)
                    if error is not None:
                        where = "/".join(str(p) for p in error.absolute_path)
                        raise CheckFailed(f"{policy} line {n}: {where}: {error.message[:200]}")
                    stamp = (record["env_id"], record["env_version"], record["renderer_version"])
                    if stamp != (spec.id, spec.version, spec.renderer_version):
                        raise CheckFailed(
                            f"line {n} is stamped {stamp}, the env is "
                            f"{(spec.id, spec.version, spec.renderer_version)}"
                        )
                    if not record["policy_checkpoint"]:
                        raise CheckFailed(f"line {n} has no policy_checkpoint")
                    lines += 1
            for log in read_episodes(path):
                verify_chain(log)
                episodes += 1
    note, golden_metrics = golden.check(target)
    metrics = {"lines": lines, "episodes": episodes, **golden_metrics}
    return (
        f"{lines} lines from {episodes} episodes validate against the JSON Schema, carry "
        f"{spec.id} {spec.version}/r{spec.renderer_version}, and chain{note}",
        metrics,
    )
