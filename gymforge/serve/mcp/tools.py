"""The tools a served environment offers over MCP: its own, plus tasks, reset and submit.

The environment's tools keep their names, descriptions and JSON Schemas (the ``parameters``
of their gymforge tool specs, ``additionalProperties: false``). Three more are gymforge's:

- ``gymforge_tasks(split="train", family=None, n=10, seed=0)``: task ids sampled from the
  environment's task source (``TaskSource.sample``: deterministic in ``seed``, never a
  held-out id for ``train``), with the family names to filter by; not a step;
- ``gymforge_reset(task_id, seed=0)``: start an episode of task ``task_id`` (its schema's
  example is a real task id of the environment, sampled with seed 0);
- ``gymforge_submit(reply)``: send the final reply (the ``Reply`` action).
"""

from __future__ import annotations

from typing import Any

import mcp_types as types

from gymforge.core.errors import UnknownTaskError, UserError
from gymforge.tasks.source import TaskSource

TASKS = "gymforge_tasks"
RESET = "gymforge_reset"
SUBMIT = "gymforge_submit"
MAX_TASKS = 1000

_TASKS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "split": {"enum": ["train", "heldout", "all"], "default": "train"},
        "family": {"type": "string", "description": "Only tasks of this family (or dataset)."},
        "n": {"type": "integer", "minimum": 1, "maximum": MAX_TASKS, "default": 10},
        "seed": {"type": "integer", "default": 0, "description": "Same seed, same ids."},
    },
    "additionalProperties": False,
}


def _reset_schema(example: str | None) -> dict[str, Any]:
    task_id: dict[str, Any] = {"type": "string"}
    if example is None:
        task_id["description"] = f"The task to play (task ids: {TASKS})."
    else:
        task_id["description"] = f"The task to play (task ids: {TASKS}), e.g. {example}"
        task_id["examples"] = [example]
    return {
        "type": "object",
        "properties": {
            "task_id": task_id,
            "seed": {"type": "integer", "default": 0, "description": "The episode's seed."},
        },
        "required": ["task_id"],
        "additionalProperties": False,
    }


def example_task(tasks: TaskSource | None) -> str | None:
    """A real task id of ``tasks`` (the first train id of seed 0), None without any."""
    if tasks is None:
        return None
    try:
        return tasks.sample(1, 0, "train")[0]
    except UnknownTaskError:
        return None


_SUBMIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"reply": {"type": "string", "description": "The final answer."}},
    "required": ["reply"],
    "additionalProperties": False,
}


class ToolArgsError(ValueError):
    """Arguments of gymforge's own tools that do not fit their schema."""


def mcp_tools(
    env_tools: list[dict[str, Any]] | None, tasks: TaskSource | None = None
) -> list[types.Tool]:
    """The MCP tool list of an environment whose tools are ``env_tools`` (``EnvCatalog.tools``:
    name, description and OpenAI-style schema each) and whose tasks are ``tasks``.
    UserError when a tool's name is taken."""
    out = [
        types.Tool(
            name=TASKS,
            description="Sample task ids (by split and family, deterministic in seed) to "
            f"pass to {RESET}; also lists the families.",
            input_schema=_TASKS_SCHEMA,
        ),
        types.Tool(
            name=RESET,
            description="Start an episode of the task; returns its first observation.",
            input_schema=_reset_schema(example_task(tasks)),
        ),
        types.Tool(
            name=SUBMIT,
            description="Submit the final reply; ends the episode with its reward.",
            input_schema=_SUBMIT_SCHEMA,
        ),
    ]
    for t in env_tools or ():
        if t["name"] in (TASKS, RESET, SUBMIT):
            raise UserError(f"the environment's tool {t['name']!r} clashes with gymforge's own")
        params = t["schema"]["function"]["parameters"]
        out.append(types.Tool(name=t["name"], description=t["description"], input_schema=params))
    return out


def sample_tasks(tasks: TaskSource | None, arguments: dict[str, Any]) -> dict[str, Any]:
    """``gymforge_tasks``'s answer: ``{"task_ids", "split", "seed", "families"}``."""
    if tasks is None:
        raise ToolArgsError("this environment exposes no task source")
    extra = set(arguments) - set(_TASKS_SCHEMA["properties"])
    split, family = arguments.get("split", "train"), arguments.get("family")
    n, seed = arguments.get("n", 10), arguments.get("seed", 0)
    names = sorted([*tasks.families, *(d.name for d in tasks.datasets)])
    if extra:
        raise ToolArgsError(f"{TASKS} takes split, family, n and seed, not {sorted(extra)}")
    if split not in ("train", "heldout", "all"):
        raise ToolArgsError(f"{TASKS}: split must be train, heldout or all")
    if family is not None and family not in names:
        raise ToolArgsError(f"{TASKS}: unknown family {str(family)[:100]!r}; known: {names}")
    for key, value, low, high in (("n", n, 1, MAX_TASKS), ("seed", seed, 0, 2**63 - 1)):
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise ToolArgsError(f"{TASKS}: {key} must be an integer in [{low}, {high}]")
    try:
        ids = tasks.sample(n, seed, split, None, None if family is None else [family])
    except UnknownTaskError as err:
        raise ToolArgsError(f"{TASKS}: {err}") from err
    return {"task_ids": ids, "split": split, "seed": seed, "families": names}


def reset_args(arguments: dict[str, Any]) -> tuple[str, int]:
    extra = set(arguments) - {"task_id", "seed"}
    task_id, seed = arguments.get("task_id"), arguments.get("seed", 0)
    if extra:
        raise ToolArgsError(f"{RESET} takes task_id and seed, not {sorted(extra)}")
    if not isinstance(task_id, str) or not task_id:
        raise ToolArgsError(f"{RESET} needs task_id, a non-empty string")
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**63:
        raise ToolArgsError(f"{RESET}: seed must be an integer in [0, 2**63)")
    return task_id, seed


def submit_args(arguments: dict[str, Any]) -> str:
    reply = arguments.get("reply")
    if set(arguments) != {"reply"} or not isinstance(reply, str):
        raise ToolArgsError(f"{SUBMIT} takes exactly one argument, reply (a string)")
    return reply
