"""Golden renderings: what an environment's renderer produced, per ``renderer_version``.

A renderer changed without a ``renderer_version`` bump is invisible to every stamp: old runs
replay against the new text with the same stamp and diverge at step 0. The golden file pins
the text. ``gymforge qa ENV --record-golden`` renders a fixed set of tasks (``GOLDEN_TASKS``
drawn with seed 0; their ids are stored) — each reset observation and, when the oracle's
first action is a tool call, the observation of that step — and writes them into
``<spec.id>.golden.json`` beside the module that defines the environment class, under the
current ``renderer_version`` (other versions' entries are kept). ``trajectory_schema`` then
re-renders the same tasks: for a version that has a golden recorded at the same env version,
any difference fails, naming the task, the first differing value and the command to
re-record. Tool schemas are pinned by digest. Subclasses that keep the spec inherit their
base class's golden.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

from gymforge.core.env import has_oracle
from gymforge.core.errors import UserError
from gymforge.core.seeding import canonical_json, derive_seed, fingerprint
from gymforge.core.types import Observation, ToolCall
from gymforge.qa.checks.common import CheckFailed, first_difference, need_tasks, run_async, short
from gymforge.qa.target import QATarget
from gymforge.rollout.episode import observation_record

GOLDEN_TASKS = 4
FORMAT = 1


def _file_name(target: QATarget) -> str:
    return f"{target.spec.id}.golden.json"


def _class_dir(cls: type) -> Path | None:
    try:
        return Path(inspect.getfile(cls)).resolve().parent
    except (TypeError, OSError):
        return None


def find_golden(target: QATarget) -> Path | None:
    """The golden file of the environment class or, failing that, of its nearest base."""
    for cls in target.env_type.__mro__ if target.env_type else ():
        where = _class_dir(cls)
        if where is not None and (where / _file_name(target)).is_file():
            return where / _file_name(target)
    return None


def record_command(target: QATarget) -> str:
    return f"gymforge qa {target.import_ref or target.ref} --record-golden"


def _observation(obs: Observation) -> dict[str, Any]:
    rec = observation_record(obs)
    tools = rec.pop("tools")
    rec["tools_digest"] = fingerprint(tools) if tools else None
    plain: dict[str, Any] = json.loads(canonical_json(rec))
    return plain


async def _render(target: QATarget, task_ids: list[str]) -> list[dict[str, Any]]:
    env = target.factory()
    out = []
    try:
        for task_id in task_ids:
            seed = derive_seed("qa-golden", task_id) % 2**31
            entry: dict[str, Any] = {"task_id": task_id, "seed": seed}
            entry["reset"] = _observation(await env.reset(task_id, seed))
            entry["first_step"] = None
            if has_oracle(oracle := env):
                action = await oracle.oracle_action()
                if isinstance(action, ToolCall):
                    entry["first_step"] = _observation((await env.step(action)).observation)
            out.append(entry)
    finally:
        await env.close()
    return out


def record(target: QATarget) -> Path:
    """Write the golden renderings of the current ``renderer_version``; return the file."""
    if target.env_type is None or target.ref.startswith(("ws://", "wss://")):
        raise UserError("golden renderings are recorded beside a local environment's code")
    where = _class_dir(target.env_type)
    if where is None:
        raise UserError(f"cannot tell where {target.env_type.__name__} is defined")
    path = where / _file_name(target)
    data: dict[str, Any] = {"format": FORMAT, "env_id": target.spec.id, "renderings": {}}
    if path.is_file():
        data = json.loads(path.read_text(encoding="utf-8"))
    task_ids = need_tasks(target).sample(GOLDEN_TASKS, 0, "all")
    data["renderings"][target.spec.renderer_version] = {
        "env_version": target.spec.version,
        "tasks": run_async(_render(target, task_ids)),
    }
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def check(target: QATarget) -> tuple[str, dict[str, Any]]:
    """Compare the current renderer with the golden; (note for the details, metrics)."""
    spec, cmd = target.spec, record_command(target)
    if target.ref.startswith(("ws://", "wss://")):
        return (
            "; golden renderings not compared: they live beside the served environment's "
            "code (run `gymforge qa` on it there)",
            {"golden": None},
        )
    path = find_golden(target)
    entry = None
    if path is not None:
        entry = json.loads(path.read_text(encoding="utf-8"))["renderings"].get(
            spec.renderer_version
        )
    if path is None or entry is None:
        return (
            f"; warning: no golden renderings for renderer_version {spec.renderer_version!r}, "
            f"so a renderer change without a version bump goes unseen (record them: `{cmd}`)",
            {"golden": None},
        )
    if entry["env_version"] != spec.version:
        return (
            f"; warning: the golden renderings of renderer_version {spec.renderer_version!r} "
            f"were recorded at {entry['env_version']}, not {spec.version}: not compared "
            f"(re-record: `{cmd}`)",
            {"golden": str(path.name), "compared": 0},
        )
    golden = entry["tasks"]
    try:
        now = run_async(_render(target, [g["task_id"] for g in golden]))
    except Exception as err:
        raise CheckFailed(
            f"renderer_version {spec.renderer_version!r}: the golden tasks of {path.name} no "
            f"longer render ({type(err).__name__}: {str(err)[:200]}); if that is intended, "
            f"bump the version, or re-record with `{cmd}`"
        ) from err
    for want, got in zip(golden, now, strict=True):
        found = first_difference(want, got)
        if found is not None:
            where, was, is_now = found
            raise CheckFailed(
                f"renderer_version {spec.renderer_version!r} of {spec.id} {spec.version} "
                f"renders differently from its golden ({path.name}): task {want['task_id']}, "
                f"{where}: golden {short(was, 240)}, now {short(is_now, 240)}. A renderer "
                f"change needs a renderer_version bump; if the golden is stale, re-record it "
                f"with `{cmd}`",
                {"golden": path.name},
            )
    return (
        f"; {len(golden)} golden renderings of renderer_version {spec.renderer_version!r} match",
        {"golden": path.name, "compared": len(golden)},
    )
