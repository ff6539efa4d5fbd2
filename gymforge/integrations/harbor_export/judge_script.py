"""The verifier gymforge writes into an exported Harbor task (``tests/judge.py``).

It runs inside the task's container by ``tests/test.sh`` with only the standard library and
``tests/spec.json`` (written at export), and mirrors gymforge's own judge on plain data:

- **the candidate never sees the truth, the judge or the reward**: when the script runs as
  root (Harbor's verifier does), every process of the candidate runs as ``nobody`` (uid
  65534, no groups), in a fresh directory of its own; the task's ``tests/`` files are
  owner-only (written ``0600``/``0700`` at export), so the candidate cannot read the expected
  values, ``/logs/verifier`` is not its to write, the judging process is not its to signal,
  and every process it left behind is killed before the reward is written;
- **the tree judged is built, not inherited** (``swe``): the original repository (a copy in
  ``tests/original``) with the agent's changes to ``/app`` applied, except changes to
  protected paths, test directories, runner files (``conftest.py``, ``sitecustomize.py``,
  ``.pth``...) and modules that shadow the standard library, as ``swe``'s ``build`` drops them;
  a change to a protected path fails the task, and so does no applied change at all;
- **calls run in a child process and only values cross** (``python3 -I``): the child writes
  each call's outcome as tagged plain data on a pipe of its own (what the candidate prints
  goes nowhere; garbage on the pipe is a crash); this process compares what came back with the
  expected value using the code judge's own ``strict_equal`` (its source is inlined here at
  export). ``code`` tasks run every call in one child, as the code judge's one batch job
  does: a call that times out, or a process that dies, ends the run and the rest count as
  failed; a module that fails to load fails every call without a crash. ``swe`` checks run one
  child each;
- the reward: ``swe`` writes ``reward.txt`` (1 or 0); ``code`` writes ``reward.json`` with the
  ``code`` environment's components (``task``, ``tests_passed``, ``timeout``, ``crash``; the
  weights are in ``spec.json``). The script exits 0 either way (a crash of this script is the
  verifier's failure, not the agent's).

``--report`` judges without writing a reward (the exported ``code-agent`` task's visible-test
command); ``--spec``, ``--workspace``, ``--logs`` and ``--as-self`` run it outside a container.
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch  # noqa: F401  (the inlined judge_build uses it)
import json
import os
import resource
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# gymforge-export: inline from here
from gymforge.integrations.harbor_export.judge_build import build, read_tree
from gymforge.verify.code.shared import strict_equal

# gymforge-export: inline to here

CANDIDATE = 65534
"""The uid and gid the candidate's processes run as when this script is root."""
AS_SELF = False
"""``--as-self``: run the candidate as this script's own user (a run outside a container,
where ``nobody`` cannot execute this Python)."""
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


def from_json(v: Any) -> Any:
    """An expected value as stored (``{"$tuple": [...]}`` marks a tuple)."""
    if isinstance(v, dict):
        if set(v) == {"$tuple"}:
            return tuple(from_json(x) for x in v["$tuple"])
        return {k: from_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [from_json(x) for x in v]
    return v


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


def as_candidate() -> dict[str, Any]:
    """``subprocess`` arguments that run a child as the candidate's user (when root)."""
    if os.geteuid() != 0 or AS_SELF:
        return {}
    return {"user": CANDIDATE, "group": CANDIDATE, "extra_groups": []}


def limit(limits: dict[str, Any]) -> None:  # runs in the child, before exec
    cpu = int(limits["cpu_time"]) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    memory = int(limits["memory_bytes"])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))


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


def in_container() -> bool:
    return os.path.exists("/run/.containerenv") or os.path.exists("/.dockerenv")


def kill_leftovers() -> None:
    """Kill every process of the candidate's user (any it detached from its group); only in
    a container, whose processes of that user are all the candidate's."""
    if as_candidate() and in_container():
        kill = "import os, signal; os.kill(-1, signal.SIGKILL)"
        subprocess.run([sys.executable, "-I", "-c", kill], check=False, **as_candidate())


def lay_out(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)


def run_hidden_command(spec: dict[str, Any], here: Path, root: Path) -> tuple[bool, str]:
    """``swe`` task files: the hidden command, through ``swe``'s own runner (``runner.py``,
    its ``HIDDEN_COMMAND``), in ``root`` (the built tree, the hidden tests and the runner's
    boot files laid over it); (passed, why not). Every file there is read-only to the
    candidate (root's, when this script is root), ``HOME``/``TMPDIR`` the one place it
    writes; a run whose files came back changed fails whatever it exited with."""
    limits = spec["limits"]
    laid = read_tree(root)
    home = root.parent / "home"
    home.mkdir(mode=0o700)
    if as_candidate():
        os.chown(home, CANDIDATE, CANDIDATE)
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "TMPDIR": str(home),
        "LANG": "C.UTF-8",
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    runner = (here / "runner.py").read_text()
    proc = subprocess.Popen(
        [sys.executable, "-I", "-c", runner, *spec["argv"]],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=root,
        env=env,
        start_new_session=True,
        preexec_fn=lambda: limit(limits),
        **as_candidate(),
    )
    try:
        out, _ = proc.communicate(timeout=float(limits["wall_time"]))
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        code = None
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    if code is None:
        out, _ = proc.communicate()
    kill_leftovers()
    print(out[-4000:].decode("utf-8", "replace"))
    after = read_tree(root)
    tampered = sorted(p for p in laid if after.get(p) != laid[p])
    if tampered:
        return False, f"judge-owned files changed during the run: {', '.join(tampered[:5])}"
    if code != 0:
        return False, "the hidden command timed out" if code is None else f"it exited {code}"
    return True, ""


def tally(checks: list[dict[str, Any]], outcomes: list[dict[str, Any] | None]) -> dict[str, int]:
    t = {"run": 0, "passed": 0, "timeouts": 0, "crashes": 0, "unserialisable": 0}
    for check, o in zip(checks, outcomes, strict=True):
        t["run"] += 1
        status = o["status"] if o is not None else "not_run"
        got = decode(o["value"]) if o is not None and status == "ok" else None
        good = status == "ok" and strict_equal(got, from_json(check["expected"]))
        t["passed"] += good
        print(f"{'PASS' if good else 'FAIL'} {check['name']}" + ("" if good else f" ({status})"))
        if status == "timeout":
            t["timeouts"] += 1
        elif status == "crashed":
            t["crashes"] += 1
        elif status == "unserialisable":
            t["unserialisable"] += 1
    return t


def judge(spec: dict[str, Any], here: Path, workspace: Path) -> tuple[dict[str, int], list[str]]:
    """The tally and the reasons the task fails (none: it passes)."""
    reasons: list[str] = []
    limits = spec["limits"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "job"
        if spec["kind"] in ("swe", "swe-command"):
            tree, applied, protected = build(spec, workspace, here / "original")
            if protected:
                reasons.append(f"protected files changed: {', '.join(protected)}")
            elif not applied:
                reasons.append("no change reached the judged tree")
        else:
            source = workspace / spec["solution"]
            tree = {spec["solution"]: source.read_bytes() if source.is_file() else b""}
        root.mkdir()
        lay_out(root, tree)
        if as_candidate():
            os.chmod(tmp, 0o711)
        if spec["kind"] == "swe-command":  # every file stays this script's, read-only to it
            lay_out(root, {**read_tree(here / "hidden"), **read_tree(here / "boot")})
            ok, why = run_hidden_command(spec, here, root)
            return {"run": 1, "passed": int(ok)}, [*reasons, *([why] if why else [])]
        if as_candidate():  # the calls' job directory is the candidate's own
            for dirpath, _, filenames in os.walk(root):
                for name in [".", *filenames]:
                    os.chown(os.path.join(dirpath, name), CANDIDATE, CANDIDATE)
        calls = [[c["target"], c["args"], c["kwargs"]] for c in spec["checks"]]
        if spec["kind"] == "swe":
            outcomes = [run_calls(root, "", [c], limits)[0] for c in calls]
        else:
            outcomes = run_calls(root, spec["solution"].removesuffix(".py"), calls, limits)
        kill_leftovers()
    t = tally(spec["checks"], outcomes)
    print(f"{t['passed']}/{t['run']} checks passed")
    if t["run"] == 0 or t["passed"] != t["run"]:
        reasons.append("hidden checks failed")
    return t, reasons


def components(spec: dict[str, Any], t: dict[str, int], passed: bool) -> dict[str, float]:
    """The ``code`` environment's reward components for this tally (``CodeReward``)."""
    w = spec["reward"]
    out = {
        "task": w["task"] if passed else 0.0,
        "tests_passed": w["tests_passed"] * (t["passed"] / t["run"] if t["run"] else 0.0),
    }
    if t["timeouts"]:
        out["timeout"] = w["timeout"]
    if t["crashes"]:
        out["crash"] = w["crash"]
    return out


def write_reward(logs: Path, name: str, text: str) -> None:
    """The one reward file, written fresh (whatever was there is removed first)."""
    logs.mkdir(parents=True, exist_ok=True)
    for old in ("reward.txt", "reward.json"):
        with contextlib.suppress(FileNotFoundError):
            (logs / old).unlink()
    fd = os.open(logs / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w") as f:
        f.write(text)


def main(argv: list[str] | None = None) -> None:
    here = Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(description="gymforge's exported verifier")
    ap.add_argument("--spec", type=Path, default=here / "spec.json")
    ap.add_argument("--workspace", type=Path, default=None)
    ap.add_argument("--logs", type=Path, default=Path("/logs/verifier"))
    ap.add_argument("--report", action="store_true", help="judge, write no reward")
    ap.add_argument("--as-self", action="store_true", help="run the candidate as this user")
    a = ap.parse_args(argv)
    global AS_SELF
    AS_SELF = a.as_self
    spec = json.loads(a.spec.read_text())
    if not as_candidate():
        print(f"note: the candidate runs as this user (uid {os.geteuid()}), not as nobody")
    t, reasons = judge(spec, a.spec.resolve().parent, a.workspace or Path(spec["workspace"]))
    for r in reasons:
        print(r)
    if a.report:
        return
    if spec["kind"] in ("swe", "swe-command"):
        write_reward(a.logs, "reward.txt", "0\n" if reasons else "1\n")
    else:
        write_reward(a.logs, "reward.json", json.dumps(components(spec, t, not reasons)) + "\n")


if __name__ == "__main__":
    main()
