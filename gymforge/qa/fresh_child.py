"""The fresh-process side of ``gymforge.qa.fresh``: ``python -m gymforge.qa.fresh_child REF``.

Started by the QA suite with another ``PYTHONHASHSEED`` and, when libfaketime is available,
a wall clock shifted by weeks. It imports the environment once, reports ``ready``, and then
answers one JSON request per stdin line with one JSON line on stdout. Every item of a request
(an episode to replay, a reference episode to play) runs in its own forked grandchild, so
this process itself never builds an environment: each item sees a process in which no
episode has ever run, however the environment caches (class attributes, module globals).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

PROBE = "gymforge-qa-hash-probe"
_PRELOAD_VARS = ("LD_PRELOAD", "FAKETIME", "FAKETIME_SHARED", "FAKETIME_DONT_FAKE_MONOTONIC")


def _replay(factory: Callable[[], Any], path: str) -> dict[str, Any]:
    from gymforge.trajectory.io import read_episodes
    from gymforge.trajectory.replay import replay_episode

    async def go() -> dict[str, Any]:
        (log,) = read_episodes(path)
        env = factory()
        try:
            steps, divergence = await replay_episode(env, log)
        finally:
            await env.close()
        if divergence is None:
            return {"steps": steps, "divergence": None}
        where = {"episode_id": divergence.episode_id, "task_id": divergence.task_id}
        where.update(seed=divergence.seed, step=divergence.step, field=divergence.field)
        values = {"recorded": divergence.recorded, "replayed": divergence.replayed}
        return {"steps": steps, "divergence": {**where, **values}}

    return asyncio.run(go())


def _play(factory: Callable[[], Any], item: dict[str, Any]) -> dict[str, Any]:
    from gymforge.qa.checks.common import play, probe_policy

    async def go() -> dict[str, Any]:
        env = factory()
        try:
            records = await play(env, probe_policy(item["policy"]), item["task_id"], item["seed"])
        finally:
            await env.close()
        return {"records": records}

    return asyncio.run(go())


def _in_grandchild(work: Callable[[], dict[str, Any]], out: Path, timeout: float) -> str | None:
    """Run ``work`` in a forked grandchild that writes its JSON answer to ``out``; None on
    success, else what went wrong. The grandchild is killed after ``timeout`` seconds."""
    pid = os.fork()
    if pid == 0:  # the grandchild: never returns
        code = 0
        try:
            answer = work()
        except BaseException as err:  # reported to the parent, not raised
            answer = {"error": f"{type(err).__name__}: {str(err)[:500]}"}
            traceback.print_exc(file=sys.stderr)
            code = 1
        try:
            out.write_text(json.dumps(answer, allow_nan=False), encoding="utf-8")
        except BaseException as err:
            sys.stderr.write(f"cannot write the answer: {err}\n")
            code = 2
        sys.stderr.flush()
        os._exit(code)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return f"did not finish within {timeout:.0f} s (killed)"
        time.sleep(0.002)
    if not out.exists():
        return f"exited with status {os.waitstatus_to_exitcode(status)} and no answer"
    return None


def _answer(factory: Callable[[], Any], request: dict[str, Any]) -> dict[str, Any]:
    workdir, timeout = Path(request["dir"]), float(request["timeout"])
    results: list[dict[str, Any]] = []
    for i, item in enumerate(request["items"]):
        out = workdir / f"answer-{request['id']}-{i}.json"

        def work(item: dict[str, Any] = item) -> dict[str, Any]:
            if request["op"] == "replay":
                return _replay(factory, item["path"])
            return _play(factory, item)

        problem = _in_grandchild(work, out, timeout)
        if problem is not None:
            return {"ok": False, "error": f"item {i}: {problem}"}
        results.append(json.loads(out.read_text(encoding="utf-8")))
        out.unlink()
    return {"ok": True, "results": results}


def main(argv: list[str]) -> int:
    # The clock shift is for this process only: subprocesses it starts (sandboxes) get the
    # real clock, as they would in production.
    for name in _PRELOAD_VARS:
        os.environ.pop(name, None)
    from gymforge.envs.registry import resolve_factory

    factory = resolve_factory(argv[1])
    ready = {"ready": True, "hash_probe": hash(PROBE), "time": time.time(), "pid": os.getpid()}
    sys.stdout.write(json.dumps(ready) + "\n")
    sys.stdout.flush()
    for line in sys.stdin:
        request = json.loads(line)
        try:
            answer = _answer(factory, request)
        except Exception as err:
            answer = {"ok": False, "error": f"{type(err).__name__}: {str(err)[:500]}"}
        sys.stdout.write(json.dumps({"id": request["id"], **answer}, allow_nan=False) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
