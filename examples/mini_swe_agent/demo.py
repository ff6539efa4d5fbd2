"""mini-swe-agent on ``swe`` in workspace mode, with no model server: a local test server
stands in for the model (it plays each task's reference fix as ``bash`` tool calls, then
submits), ``gymforge run`` plays the published agent as a confined ``harness-cmd:`` policy
whose commands are ``run_command`` steps, and the environment judges each repository.
Builds the agent's venv first (``scripts/mini_swe_agent_setup.sh``).

    .venv/bin/python examples/mini_swe_agent/demo.py [-n 2] [--out DIR]

With a real model, point ``--base-url`` at it instead:

    gymforge eval swe --harness-mode workspace --base-url http://127.0.0.1:8000/v1 \\
        --policy "harness-cmd:.venv-mini-swe-agent/bin/python examples/mini_swe_agent/agent.py" \\
        -n 20 --out runs/mini-swe-agent
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path
from typing import Any

from scripted import bash_script, fix_commands  # beside this file (run as a script)

from gymforge.cli import app
from gymforge.envs.swe import SweEnv
from gymforge.testing.openai_server import OpenAITestServer

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv-mini-swe-agent"
AGENT = ROOT / "examples" / "mini_swe_agent" / "agent.py"


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("-n", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="runs/mini-swe-agent-demo")
    args = ap.parse_args()
    subprocess.run([ROOT / "scripts" / "mini_swe_agent_setup.sh"], check=True)
    env = SweEnv()
    # the tasks the run draws (as `run` draws them), told apart by their prompts
    tasks = env.tasks.sample(args.n, args.seed, "train")
    fixes = {env.tasks.resolve(t).prompt: fix_commands(t) for t in tasks}

    def commands(request: dict[str, Any]) -> list[str]:
        first = str(request["messages"][1]["content"])
        return next((fix for key, fix in fixes.items() if key in first), [])

    with OpenAITestServer(bash_script(commands)) as server:
        policy = f"harness-cmd:{VENV / 'bin' / 'python'} {AGENT}"
        argv = ["run", "swe", "--policy", policy, "--harness-mode", "workspace"]
        argv += ["--base-url", server.base_url, "-n", str(args.n), "--seed", str(args.seed)]
        app([*argv, "--out", args.out, "--overwrite"], standalone_mode=False)


if __name__ == "__main__":
    main()
