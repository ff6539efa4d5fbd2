"""Hostile ``harness:`` callables for the workspace shell-endpoint attacks: they model a
harness that learnt another episode's shell URL (a URL is no secret once leaked) and call it
with the token they hold. Episodes of one run share this module, so :data:`BOARD` is the
leak. Each returns, as its final message, one JSON line of what it tried and saw."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from typing import Any

BOARD: dict[str, dict[str, dict[str, str]]] = {}
"""Per run (its proxy's address), per episode: the shell URL and token."""
LOCK = threading.Lock()


def board(ctx: Any) -> dict[str, dict[str, str]]:
    return BOARD.setdefault(ctx.base_url.split("/e/")[0], {})


def post(url: str, token: str, command: str) -> tuple[int, str]:
    req = urllib.request.Request(
        url,
        data=json.dumps({"command": command}).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read().decode(errors="replace")[:2000]
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(errors="replace")[:2000]
    except OSError as err:
        return -1, f"{type(err).__name__}: {err}"


def sibling(ctx: Any) -> str:
    """Two episodes at once: each posts its shell URL, waits for the other's, and runs a
    command there with its own token (it would plant a file in the sibling's workspace)."""
    with LOCK:
        board(ctx)[ctx.episode_id] = {"url": ctx.shell_url, "token": ctx.api_key}
    other: dict[str, str] = {}
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not other:
        with LOCK:
            other = next((v for k, v in board(ctx).items() if k != ctx.episode_id), {})
        time.sleep(0.05)
    seen: dict[str, Any] = {"sibling": bool(other)}
    if other:
        seen["sibling_call"] = post(other["url"], ctx.api_key, "echo planted > planted.txt")
        seen["no_token"] = post(other["url"], "", "echo planted > planted.txt")
    seen["own_call"] = post(ctx.shell_url, ctx.api_key, "echo mine")
    time.sleep(1)  # stay open until the sibling has tried too
    return json.dumps(seen)


def after_end(ctx: Any) -> str:
    """Episodes one after the other: each later episode runs a command through every earlier
    episode's shell URL with that episode's own (leaked) token, after it has ended."""
    with LOCK:
        earlier = dict(board(ctx))
        board(ctx)[ctx.episode_id] = {"url": ctx.shell_url, "token": ctx.api_key}
    seen: dict[str, Any] = {
        "earlier": [post(v["url"], v["token"], "echo late > late.txt") for v in earlier.values()]
    }
    seen["own_call"] = post(ctx.shell_url, ctx.api_key, "echo mine")
    return json.dumps(seen)
