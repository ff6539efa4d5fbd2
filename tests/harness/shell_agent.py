"""A workspace harness without a model (standard library only: it runs under any Python).

``python shell_agent.py PLAN.json`` runs each command of the plan through ``gymforge-sh -c``
(on its ``PATH`` in workspace mode) and prints, as its final message, one JSON line: the
instruction it was given and each command's exit code and output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys


def main() -> None:
    with open(sys.argv[1]) as f:
        plan = json.load(f)
    with open(os.environ["GYMFORGE_INSTRUCTION_FILE"]) as f:
        instruction = f.read()
    ran = []
    for command in plan:
        r = subprocess.run(["gymforge-sh", "-c", command], capture_output=True, text=True)
        ran.append({"command": command, "exit": r.returncode, "out": r.stdout, "err": r.stderr})
    print(json.dumps({"instruction": instruction, "ran": ran, "env": sorted(os.environ)}))


if __name__ == "__main__":
    main()
