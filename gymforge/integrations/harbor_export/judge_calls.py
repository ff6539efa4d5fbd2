"""The candidate's calls in the exported verifier (inlined into ``judge.py`` at export, so
standard library only): one child process (``python3 -I``, ``CHILD``) runs them and writes
each call's outcome as tagged plain data on a pipe of its own; what it prints goes nowhere,
garbage on the pipe is a crash, and only values cross (``decode``)."""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from gymforge.integrations.harbor_export.judge_candidate import as_candidate, limit

OUTPUT_CAP = 4 << 20
CHILD = r"""
import importlib, json, os, sys
sys.dont_write_bytecode = True
sys.path.insert(0, ".")
out = os.fdopen(int(sys.argv[1]), "w")
dumps = json.dumps


def enc(v, depth=0):
    if depth > 50:
        raise ValueError("too deep")
    if v is None or type(v) in (bool, int, float, str):
        return v
    if type(v) is list:
        return [enc(x, depth + 1) for x in v]
    if type(v) is tuple:
        return {"$tuple": [enc(x, depth + 1) for x in v]}
    if type(v) is dict and all(type(k) is str for k in v):
        return {"$dict": {k: enc(x, depth + 1) for k, x in v.items()}}
    raise ValueError(type(v).__name__)


def say(**what):
    out.write(dumps(what) + "\n")
    out.flush()


def call(target, args, kwargs):
    if target.startswith("@absent:"):
        module, name = target[len("@absent:"):].rsplit(":", 1)
        try:
            return not hasattr(importlib.import_module(module), name)
        except ImportError:
            return True
    module, name = target.rsplit(":", 1)
    fn = importlib.import_module(module)
    for part in name.split("."):
        fn = getattr(fn, part)
    return fn(*args, **kwargs)


load, calls = json.loads(sys.stdin.read())
if load:
    try:
        importlib.import_module(load)
    except BaseException as e:
        say(load=type(e).__name__)
        raise SystemExit(0)
say(load="ok")
for target, args, kwargs in calls:
    try:
        value = call(target, args, kwargs)
    except BaseException as e:
        say(status="exception", error=type(e).__name__)
        continue
    try:
        say(status="ok", value=enc(value))
    except (ValueError, RecursionError, OverflowError):
        say(status="unserialisable")
"""


def decode(v: Any) -> Any:
    """What the child returned, tagged plain data back to values (an unknown tag never
    equals anything)."""
    if isinstance(v, dict):
        if set(v) == {"$tuple"}:
            return tuple(decode(x) for x in v["$tuple"])
        if set(v) == {"$dict"} and isinstance(v["$dict"], dict):
            return {k: decode(x) for k, x in v["$dict"].items()}
        return object()
    if isinstance(v, list):
        return [decode(x) for x in v]
    return v


def run_calls(
    root: Path, load: str, calls: list[list[Any]], limits: dict[str, Any]
) -> list[dict[str, Any] | None]:
    """Each call's outcome (``{"status": ...}``), None for a call never run. A call that
    passes the per-call limit is ``timeout``; one during which the process died (or wrote
    garbage on the result channel) is ``crashed``; either ends the run. A module that does
    not load leaves every call not run."""
    channel, child_end = os.pipe()
    proc = subprocess.Popen(
        [sys.executable, "-I", "-c", CHILD, str(child_end)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        pass_fds=(child_end,),
        cwd=root,
        start_new_session=True,
        preexec_fn=lambda: limit(limits),
        **as_candidate(),
    )
    os.close(child_end)
    assert proc.stdin is not None
    try:
        proc.stdin.write(json.dumps([load, calls]).encode())
        proc.stdin.close()
    except BrokenPipeError:
        pass
    outcomes: list[dict[str, Any] | None] = [None] * len(calls)
    start = time.monotonic()
    deadline = start + float(limits["wall_time"])
    buf, seen, loaded, ended = b"", 0, False, ""
    sel = selectors.DefaultSelector()
    sel.register(channel, selectors.EVENT_READ)
    step_deadline = start + float(limits["call_timeout"]) if load else deadline
    while seen < len(calls) and not ended:
        wait = min(deadline, step_deadline) - time.monotonic()
        if wait <= 0 or not sel.select(wait):
            ended = "timeout"
            break
        chunk = os.read(channel, 65536)
        if not chunk:
            ended = "crashed"
            break
        buf += chunk
        if len(buf) > OUTPUT_CAP:
            ended = "output_limit"
            break
        while b"\n" in buf and seen < len(calls):
            line, buf = buf.split(b"\n", 1)
            try:
                said = json.loads(line)
            except ValueError:
                said = None
            if not isinstance(said, dict):
                ended = "crashed"
                break
            if not loaded:
                if said.get("load") != "ok":
                    ended = "load_failed"
                    break
                loaded = True
            elif said.get("status") in ("ok", "exception", "unserialisable"):
                outcomes[seen] = said
                seen += 1
            else:
                ended = "crashed"
                break
            step_deadline = time.monotonic() + float(limits["call_timeout"])
    sel.close()
    os.close(channel)
    stop(proc)
    if ended and loaded and seen < len(calls):
        outcomes[seen] = {"status": ended}
    return outcomes


def stop(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
