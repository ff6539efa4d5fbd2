"""The fresh-process side of ``gymforge.qa.fresh``: ``python -m gymforge.qa.fresh_child REF``.

Started by the QA suite with another ``PYTHONHASHSEED`` and, when libfaketime is available,
a wall clock shifted by weeks. It imports the environment, reports ``ready``, and then
answers one JSON request per stdin line, in order, with one JSON line on stdout. Requests
are ``replay`` (episode files, each replayed on its own instance, up to the first
divergence) and ``play`` (reference episodes, each on its own instance). The parent sends
the reference episodes first, so they run in a process in which no episode ran before:
whatever the environment caches process-wide (class attributes, module globals) starts
empty there. One process for the run, not one per episode: environments with process-wide
worker pools (the math verifier's zygote, the code sandbox) start them once.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from gymforge.core.env import Environment
from gymforge.qa.clock import CLOCK_VARS, ClockAudit, propagate, tool_clock
from gymforge.qa.lifeline import follow_parent

PROBE = "gymforge-qa-hash-probe"
AUDITS: list[ClockAudit] = []
"""The clock audit of this process, when its clock is shifted (see ``main``)."""


def _scan() -> None:
    """Look for unshifted tool subprocesses while the episode's environment still runs."""
    for audit in AUDITS:
        audit.scan()


async def _replay(factory: Callable[[], Environment], paths: list[str]) -> dict[str, Any]:
    from gymforge.rollout.replay import replay_episode
    from gymforge.trajectory.io import read_episodes

    episodes: list[dict[str, Any]] = []
    for path in paths:
        (log,) = read_episodes(path)
        env = factory()
        try:
            steps, divergence = await replay_episode(env, log)
        finally:
            _scan()
            await env.close()
        if divergence is None:
            episodes.append({"steps": steps, "divergence": None})
            continue
        where: dict[str, Any] = {"episode_id": divergence.episode_id, "seed": divergence.seed}
        where.update(task_id=divergence.task_id, step=divergence.step, field=divergence.field)
        values = {"recorded": divergence.recorded, "replayed": divergence.replayed}
        episodes.append({"steps": steps, "divergence": {**where, **values}})
        break
    return {"episodes": episodes}


async def _play(factory: Callable[[], Environment], item: dict[str, Any]) -> dict[str, Any]:
    from gymforge.qa.episodes import play, probe_policy

    episodes = []
    for task_id, seed in item["pairs"]:
        env = factory()
        try:
            episodes.append(await play(env, probe_policy(item["policy"]), task_id, seed))
        finally:
            _scan()
            await env.close()
    return {"episodes": episodes}


async def _answer(factory: Callable[[], Environment], request: dict[str, Any]) -> dict[str, Any]:
    results: list[dict[str, Any]] = []
    for item in request["items"]:
        try:
            if request["op"] == "replay":
                results.append(await _replay(factory, item["paths"]))
            else:
                results.append(await _play(factory, item))
        except Exception as err:  # reported to the parent, not raised
            results.append({"error": f"{type(err).__name__}: {str(err)[:500]}"})
    return {"ok": True, "results": results}


def main(argv: list[str]) -> int:
    follow_parent()  # dies with the qa process that started it (gymforge.qa.lifeline)
    # The shifted clock reaches the tool subprocesses the environment starts, whatever
    # environment they are given; gymforge's sandbox gets the real clock, as in production.
    # The audit names the subprocesses it does not reach (gymforge.qa.clock).
    clock = tool_clock(os.environ)
    for name in CLOCK_VARS:
        os.environ.pop(name, None)
    exempt: set[int] = set()
    propagate(clock, exempt)
    audit = ClockAudit(exempt) if clock else None
    if audit is not None:
        AUDITS.append(audit)
        audit.start()
    # The protocol owns the original stdout; anything the environment prints (Python or C)
    # goes to stderr instead of corrupting it.
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    from gymforge.registry.resolve import resolve_factory
    from gymforge.settings import Settings
    from gymforge.verify.services import RunServices

    # the parent's settings, which it wrote into this process's environment (FreshProcess)
    services = RunServices(Settings.from_environ())
    services.__enter__()  # for the child's whole life
    factory = resolve_factory(argv[1])  # an import path: no server, no token
    ready = {"ready": True, "hash_probe": hash(PROBE), "time": time.time(), "pid": os.getpid()}
    protocol.write(json.dumps(ready) + "\n")
    protocol.flush()
    for line in sys.stdin:
        request = json.loads(line)
        try:
            answer = asyncio.run(_answer(factory, request))
            answer["unshifted"] = audit.scan() if audit is not None else []
            text = json.dumps({"id": request["id"], **answer}, allow_nan=False)
        except Exception as err:
            error = f"{type(err).__name__}: {str(err)[:500]}"
            text = json.dumps({"id": request["id"], "ok": False, "error": error})
        protocol.write(text + "\n")
        protocol.flush()
    services.__exit__(None, None, None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
