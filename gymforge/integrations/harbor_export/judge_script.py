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

One file when exported: its parts (who the candidate runs as, the child that runs the calls,
how the ``swe`` tree is built) are inlined here whole, with ``strict_equal``
(``common.judge_source``).
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch  # noqa: F401  (the inlined judge_build uses it)
import json
import os
import resource  # noqa: F401  (the inlined judge_candidate uses it)
import selectors  # noqa: F401  (the inlined judge_calls uses it)
import signal
import subprocess
import sys
import tempfile
import time  # noqa: F401  (the inlined judge_calls uses it)
from pathlib import Path
from typing import Any

# gymforge-export: inline from here
from gymforge.integrations.harbor_export.judge_build import build, read_tree
from gymforge.integrations.harbor_export.judge_calls import (
    CHILD,
    OUTPUT_CAP,
    decode,
    run_calls,
    stop,
)
from gymforge.integrations.harbor_export.judge_candidate import (
    CANDIDATE,
    as_candidate,
    in_container,
    kill_leftovers,
    limit,
    run_as_self,
)
from gymforge.verify.code.shared import from_json, strict_equal

# gymforge-export: inline to here

__all__ = [
    "CANDIDATE",
    "CHILD",
    "OUTPUT_CAP",
    "as_candidate",
    "build",
    "components",
    "decode",
    "from_json",
    "in_container",
    "judge",
    "kill_leftovers",
    "lay_out",
    "limit",
    "main",
    "read_tree",
    "run_as_self",
    "run_calls",
    "run_hidden_command",
    "stop",
    "strict_equal",
    "tally",
    "write_reward",
]


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
    run_as_self(a.as_self)
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
