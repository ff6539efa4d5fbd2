"""gymforge-sh: run one shell command in a gymforge episode's workspace.

    gymforge-sh -c 'COMMAND'      # or: echo 'COMMAND' | gymforge-sh

Sends the command to the episode's shell endpoint (``GYMFORGE_SHELL_URL``, with the
episode's token ``GYMFORGE_TOKEN``), prints what it wrote to its standard output and error,
and exits with its exit code. Exit 125 when the endpoint refused or could not be reached
(the message says why), 124 when the command hit its limits. Standard library only: this
file is copied, as is, into each workspace harness's episode directory.
"""

import json
import os
import sys
import urllib.error
import urllib.request


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "-c":
        command = argv[1]
    elif not argv:
        command = sys.stdin.read()
    else:
        sys.stderr.write("usage: gymforge-sh -c COMMAND  (or the command on standard input)\n")
        return 2
    url, token = os.environ.get("GYMFORGE_SHELL_URL"), os.environ.get("GYMFORGE_TOKEN")
    if not url or not token:
        sys.stderr.write("gymforge-sh: GYMFORGE_SHELL_URL and GYMFORGE_TOKEN must be set\n")
        return 125
    req = urllib.request.Request(
        url,
        data=json.dumps({"command": command}).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
    )
    try:
        with urllib.request.urlopen(req, timeout=None) as r:
            answer = json.load(r)
    except urllib.error.HTTPError as err:
        detail = err.read().decode(errors="replace")[:500]
        sys.stderr.write(f"gymforge-sh: the shell endpoint refused ({err.code}): {detail}\n")
        return 125
    except (OSError, ValueError) as err:
        sys.stderr.write(f"gymforge-sh: cannot reach the shell endpoint: {err}\n")
        return 125
    sys.stdout.write(str(answer.get("stdout", "")))
    sys.stdout.flush()
    sys.stderr.write(str(answer.get("stderr", "")))
    code = answer.get("exit_code")
    if not isinstance(code, int):
        return 1
    return 128 - code if code < 0 else min(code, 255)  # -N: killed by signal N


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
