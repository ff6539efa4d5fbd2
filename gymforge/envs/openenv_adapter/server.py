"""What an OpenEnv (0.10) server says about itself, read once over HTTP.

An OpenEnv server (``openenv.core.env_server.http_server.create_app``) answers
``GET /metadata`` (name, version), ``GET /schema`` (the JSON schemas of its action,
observation and state), ``GET /list_environments`` and, when the environment implements
OpenEnv's Task API, ``GET /{env}/splits``, ``POST /{env}/num_tasks`` and ``POST /{env}/tasks``
(the task specs of a split; a split too large to list is represented by its indices).
Episodes themselves go over its WebSocket (``/ws``): its HTTP ``/step`` builds a fresh
environment per call.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

import jsonschema

from gymforge.core.errors import UserError
from gymforge.verify.json_schema import JsonRefused, parse_json
from gymforge.verify.json_unique import Validator

TIMEOUT_S = 10.0
MAX_ACTION_CHARS = 200_000
MAX_ACTION_DEPTH = 64
"""A JSON action's bounds: larger or deeper is the agent's recoverable mistake."""
HELDOUT_SPLITS = frozenset({"test", "eval", "evaluation", "validation", "val", "dev", "heldout"})
"""Split names (or ``type``s) that OpenEnv environments use for evaluation data."""


@dataclass(frozen=True)
class ServerInfo:
    """The server's self-description: ``splits`` (split -> its task specs) is None when it
    has no Task API."""

    url: str
    env_name: str
    version: str
    action_schema: dict[str, Any]
    splits: dict[str, list[Any]] | None
    heldout: frozenset[str]

    @property
    def text_field(self) -> str | None:
        """The one required string field a plain-text reply fills, if the action has one."""
        props = self.action_schema.get("properties", {})
        required = [p for p in self.action_schema.get("required", []) if p != "metadata"]
        if len(required) == 1 and props.get(required[0], {}).get("type") == "string":
            return str(required[0])
        return None

    def action_of(self, text: str) -> dict[str, Any] | str:
        """The OpenEnv action for reply ``text``, or the error the agent is shown. A JSON
        action is checked against the server's action schema here, so that the policy's
        mistake gets a recoverable answer rather than a server error (an infrastructure one)."""
        text_field = self.text_field
        if text_field is not None:
            return {text_field: text}
        schema = self.action_schema
        fields = ", ".join(sorted(schema.get("properties", {})))
        ask = f"Reply with one JSON object of the action's fields ({fields})"
        if not text.lstrip().startswith("{"):
            return f"{ask}."
        try:  # bounded, as the JSON judge parses (never json's RecursionError, NaN or a hedge)
            action = parse_json(text, MAX_ACTION_CHARS, MAX_ACTION_DEPTH)
        except JsonRefused as err:
            return f"{ask}: {err}."
        if not isinstance(action, dict):
            return f"{ask}."
        problem = jsonschema.exceptions.best_match(Validator(schema).iter_errors(action))
        if problem is not None:
            where = "/".join(str(p) for p in problem.absolute_path) or "the action"
            return f"Invalid action: {where}: {problem.message[:300]}"
        return action


def _request(url: str, body: dict[str, Any] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:
        return json.loads(resp.read())


def _optional(url: str, body: dict[str, Any] | None = None) -> Any:
    """The JSON at ``url``, or None when the server refuses it (an unsupported Task API)."""
    try:
        return _request(url, body)
    except urllib.error.HTTPError:
        return None


def read_server(url: str) -> ServerInfo:
    """Ask the OpenEnv server at ``url`` (``http://HOST:PORT``) what it serves; a UserError
    naming the URL when nothing OpenEnv-like answers there."""
    base = url.rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise UserError(f"openenv:{url}: give the server's http://HOST:PORT")
    try:
        meta = _request(f"{base}/metadata")
        schema = _request(f"{base}/schema")
        names = _optional(f"{base}/list_environments") or []
    except (OSError, ValueError) as err:
        raise UserError(f"openenv:{url}: no OpenEnv server answers there ({err})") from err
    if not isinstance(schema, dict) or not isinstance(schema.get("action"), dict):
        raise UserError(f"openenv:{url}: /schema has no action schema; is it an OpenEnv server?")
    env_name = str(names[0]) if names else str(meta.get("name", "env"))
    splits: dict[str, list[Any]] | None = None
    heldout: set[str] = set()
    listed = _optional(f"{base}/{env_name}/splits")
    if isinstance(listed, list) and listed:
        splits = {}
        for entry in listed:
            name = str(entry.get("name") if isinstance(entry, dict) else entry)
            kind = str(entry.get("type", "")) if isinstance(entry, dict) else ""
            count = _optional(f"{base}/{env_name}/num_tasks", {"split": name})
            found = count.get("num_tasks", count) if isinstance(count, dict) else count
            n = found if isinstance(found, int) else 0
            listed_tasks = _optional(f"{base}/{env_name}/tasks", {"split": name})
            specs = listed_tasks.get("tasks") if isinstance(listed_tasks, dict) else None
            if not isinstance(specs, list) or len(specs) != n:  # a preview, or no listing
                specs = [{"index": i} for i in range(n)]
            splits[name] = specs
            if name.lower() in HELDOUT_SPLITS or kind.lower() in HELDOUT_SPLITS:
                heldout.add(name)
    return ServerInfo(
        url=base,
        env_name=env_name,
        version=str(meta.get("version", "0")),
        action_schema=schema["action"],
        splits=splits,
        heldout=frozenset(heldout),
    )
