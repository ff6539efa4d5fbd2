"""The tools a served environment offers over MCP: its own, plus reset and submit.

The environment's tools keep their names, descriptions and JSON Schemas (the ``parameters``
of their gymforge tool specs, ``additionalProperties: false``). Two more drive the episode:

- ``gymforge_reset(task_id, seed=0)``: start an episode of task ``task_id``;
- ``gymforge_submit(reply)``: send the final reply (the ``Reply`` action).
"""

from __future__ import annotations

from typing import Any

import mcp_types as types

from gymforge.core.errors import UserError

RESET = "gymforge_reset"
SUBMIT = "gymforge_submit"

_RESET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "task_id": {"type": "string", "description": "The task to play, e.g. ledger.transfer@1:…"},
        "seed": {"type": "integer", "default": 0, "description": "The episode's seed."},
    },
    "required": ["task_id"],
    "additionalProperties": False,
}
_SUBMIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"reply": {"type": "string", "description": "The final answer."}},
    "required": ["reply"],
    "additionalProperties": False,
}


class ToolArgsError(ValueError):
    """Arguments of ``gymforge_reset``/``gymforge_submit`` that do not fit their schema."""


def mcp_tools(env_tools: list[dict[str, Any]] | None) -> list[types.Tool]:
    """The MCP tool list of an environment whose tools are ``env_tools`` (``EnvCatalog.tools``:
    name, description and OpenAI-style schema each). UserError when a tool's name is taken."""
    out = [
        types.Tool(
            name=RESET,
            description="Start an episode of the task; returns its first observation.",
            input_schema=_RESET_SCHEMA,
        ),
        types.Tool(
            name=SUBMIT,
            description="Submit the final reply; ends the episode with its reward.",
            input_schema=_SUBMIT_SCHEMA,
        ),
    ]
    for t in env_tools or ():
        if t["name"] in (RESET, SUBMIT):
            raise UserError(f"the environment's tool {t['name']!r} clashes with gymforge's own")
        params = t["schema"]["function"]["parameters"]
        out.append(types.Tool(name=t["name"], description=t["description"], input_schema=params))
    return out


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
