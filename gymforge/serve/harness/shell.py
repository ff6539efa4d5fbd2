"""The shell endpoint of a workspace harness (``--harness-mode workspace``).

Each workspace episode's channel (:class:`~gymforge.serve.harness.bridge.Channel`, made
with ``shell=True``) answers ``POST /sh/<channel>`` with a JSON body ``{"command": TEXT}``
and the episode's bearer token. The command becomes one step of the episode, a
``ToolCall`` of the environment's shell tool (:mod:`gymforge.tools.shell`), and the answer
is ``{"stdout", "stderr", "exit_code"}`` (:class:`~gymforge.tools.shell.ShellOutcome`).
Refused before the episode sees anything: a channel that does not exist or has ended
(404), a missing or another episode's token (401/403), a tools-mode channel (404: it has
no shell), a body over :data:`MAX_BODY` (413) or not of that shape (400). When the episode
ends while a command waits, the answer is 410.

The harness gets :data:`CLIENT` as ``gymforge-sh`` on its ``PATH``: ``gymforge-sh -c
COMMAND`` (or the command on standard input) prints the output and exits with the command's
exit code. It is a standard-library script, copied into the episode directory, so it runs
under the harness's own view of the system without gymforge.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from gymforge.serve.config import auth_problem
from gymforge.serve.harness.confine import DEFAULT_PATH, EPISODE_DIR, interpreter_tree
from gymforge.serve.harness.netrelay import install_client as install_relay
from gymforge.settings import inherited_environ

if TYPE_CHECKING:
    from gymforge.serve.harness.bridge import Channel

SHELL_PATH = "/sh/{session}"
MAX_BODY = 256 << 10
CLIENT_NAME = "gymforge-sh"
CLIENT = Path(__file__).with_name("shell_client.py")
CLIENT_PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
"""The interpreter of the clients (standard library only): the system's where there is one."""
ENDED = {"error": "the episode has ended; no more commands"}


def shell_url(base: str, channel_id: str) -> str:
    return base.rstrip("/") + SHELL_PATH.format(session=channel_id)


async def shell_endpoint(request: Request, channel: Channel | None) -> Response:
    """One command of one episode (module docstring)."""
    if channel is None or channel.closed or not channel.shell:
        return JSONResponse({"error": "no such episode shell (it has ended?)"}, status_code=404)
    problem = auth_problem(request.headers.get("authorization"), channel.token)
    if problem is not None:
        status = 401 if problem.startswith("missing") else 403
        return JSONResponse({"error": problem}, status_code=status)
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            return JSONResponse({"error": f"body over {MAX_BODY} bytes"}, status_code=413)
    try:
        parsed: Any = json.loads(body)
    except ValueError:
        parsed = None
    command = parsed.get("command") if isinstance(parsed, dict) else None
    if not isinstance(command, str) or set(parsed) != {"command"}:
        return JSONResponse({"error": 'the body must be {"command": TEXT}'}, status_code=400)
    answer = await channel.run(command)
    if answer is None:
        return JSONResponse(ENDED, status_code=410)
    return JSONResponse(answer)


def workspace_endpoints(
    endpoints: dict[str, str], url: str, token: str, instruction: str, episode_dir: Path
) -> dict[str, str]:
    """A workspace harness's variables, from a tools-mode harness's ``endpoints``: the shell
    (``GYMFORGE_SHELL_URL``, ``GYMFORGE_TOKEN``, ``gymforge-sh`` first on ``PATH``) in place of
    ``GYMFORGE_MCP_URL``, and its instruction at ``GYMFORGE_INSTRUCTION_FILE``."""
    install_client(episode_dir)
    (episode_dir / "instruction.md").write_text(instruction)
    path = inherited_environ().get("PATH") or DEFAULT_PATH
    out = {k: v for k, v in endpoints.items() if k != "GYMFORGE_MCP_URL"}
    return out | {
        "GYMFORGE_SHELL_URL": url,
        "GYMFORGE_TOKEN": token,
        "GYMFORGE_INSTRUCTION_FILE": f"{EPISODE_DIR}/instruction.md",
        "PATH": f"{EPISODE_DIR}/bin:{path}",
    }


def install_client(episode_dir: Path) -> Path:
    """Write ``gymforge-sh`` and ``gymforge-net`` (:mod:`~gymforge.serve.harness.netrelay`)
    into ``episode_dir/bin`` (returned), run by :data:`CLIENT_PYTHON`."""
    bin_dir = episode_dir / "bin"
    bin_dir.mkdir(exist_ok=True)
    target = bin_dir / CLIENT_NAME
    target.write_text(f"#!{CLIENT_PYTHON}\n" + CLIENT.read_text())
    target.chmod(0o755)
    install_relay(episode_dir, CLIENT_PYTHON)
    bin_dir.chmod(0o755)
    return bin_dir


def client_paths() -> tuple[str, ...]:
    """What the harness must see to run :data:`CLIENT_PYTHON` (nothing when it is the
    system's, under ``/usr``)."""
    return tuple(interpreter_tree(CLIENT_PYTHON))


def ports(*urls: str) -> tuple[int, ...]:
    """The loopback ports of the episode's endpoint URLs."""
    out = []
    for url in urls:
        parsed = urlsplit(url)
        if parsed.hostname != "127.0.0.1" or parsed.port is None:
            raise ValueError(f"a workspace harness's endpoint must be on 127.0.0.1: {url}")
        out.append(parsed.port)
    return tuple(out)
