"""Server instructions per step of ``gymforge serve benchmarks/echo_env.py:EchoEnv``: a count
that the machine's other jobs do not move, unlike CPU time.

The server runs under ``valgrind --tool=callgrind`` twice per repetition, driven by the same
raw load client as ``serve_load.py`` (N sessions, each a reset and then S steps) at two step
counts S1 < S2. Its counters are zeroed once it answers ``/health`` (start-up left out) and
read once the load is done (``callgrind_control``); both runs hold the same handshakes,
resets and closes, so the difference of their counts over ``N * (S2 - S1)`` is what one
step costs. The server runs with ``PYTHONHASHSEED=0`` (string hashes, and so every dict's
and set's probing, the same in every run). ``--pythonpath`` serves another checkout of
gymforge (an older commit, say) in the same way, so two trees are compared by one command.
Under valgrind the server runs tens of times slower: keep N and S small (the defaults take
a few minutes).

Run: python benchmarks/serve_instructions.py [--sessions 64] [--steps 10 40] [--reps 1]
[--pythonpath TREE ...] [--asyncio]
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from serve_load import NO_UVLOOP, TOKEN
from serve_peers import gymforge_echo_scripts
from ws_load import Peer, raise_nofile, run_load

ECHO = f"{Path(__file__).with_name('echo_env.py')}:EchoEnv"


def run_server(pythonpath: str, sessions: int, steps: int, asyncio_loop: bool) -> int:
    """Instructions the server executed serving ``sessions`` x ``steps`` (from its
    ``/health`` answer to the load's end)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        launcher = ["-c", NO_UVLOOP] if asyncio_loop else ["-m", "gymforge.cli"]
        cap = str(sessions + 16)
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}.%p"]
        cmd += [f"--log-file={tmp}/log", sys.executable, *launcher, "serve", ECHO, "--port", "0"]
        cmd += ["--token", TOKEN, "--max-sessions", cap, "--max-sessions-per-client", cap]
        env = {**os.environ, "PYTHONPATH": pythonpath, "PYTHONHASHSEED": "0"}
        proc = subprocess.Popen(  # run from tmp: ``-m`` puts the working directory first
            cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env, cwd=tmp
        )
        assert proc.stderr is not None
        try:
            line = proc.stderr.readline().decode()
            match = re.search(r"(?:ws|http)://127\.0\.0\.1:(\d+)", line)
            if not match:
                raise RuntimeError(f"server did not start: {line}")
            base = f"http://127.0.0.1:{match.group(1)}"
            for _ in range(1200):
                try:
                    httpx.get(base + "/health", timeout=5)
                    break
                except httpx.HTTPError:
                    time.sleep(0.1)
            control("-z", proc.pid)
            url = base.replace("http://", "ws://") + "/ws"
            auth = (("Authorization", f"Bearer {TOKEN}"),)
            expect = frozenset({"reset_result", "step_result"})
            peer = Peer("gymforge-echo", url, proc.pid, auth, hello=True, expect=expect)
            run_load(peer, gymforge_echo_scripts(sessions, steps), 3)
            control("-d", proc.pid)
        finally:
            proc.send_signal(signal.SIGINT)
            proc.stderr.read()
            proc.wait(300)
        dumps = sorted(Path(tmp).glob("callgrind.out.*"), key=lambda f: f.stat().st_mtime)
        totals = re.search(r"^(?:summary|totals):\s*(\d+)", dumps[0].read_text(), re.M)
        if totals is None:
            raise RuntimeError(f"no instruction count in {dumps[0].name}")
        return int(totals.group(1))


def control(flag: str, pid: int) -> None:
    """``callgrind_control`` on the server: ``-z`` zeroes its counters, ``-d`` dumps them."""
    subprocess.run(["callgrind_control", flag, str(pid)], check=True, capture_output=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=64)
    ap.add_argument("--steps", type=int, nargs=2, default=[10, 40])
    ap.add_argument("--reps", type=int, default=1)
    here = str(Path(__file__).resolve().parents[1])
    ap.add_argument("--pythonpath", nargs="+", default=[here], help="gymforge trees to serve")
    ap.add_argument("--asyncio", action="store_true", help="serve on asyncio, not uvloop")
    args = ap.parse_args()
    raise_nofile(args.sessions + 1024)
    low, high = args.steps
    for rep in range(args.reps):
        for tree in args.pythonpath:
            counts = [run_server(tree, args.sessions, s, args.asyncio) for s in (low, high)]
            per_step = (counts[1] - counts[0]) / (args.sessions * (high - low))
            print(f"rep {rep} {tree}: {per_step:,.0f} instructions per step", flush=True)


if __name__ == "__main__":
    main()
