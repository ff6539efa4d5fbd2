"""A ``harness-cmd:`` program reads the seal key and the runner's API keys: from its own
environment, from every ``/proc/PID/environ`` it can open, from the runner's working
directory and home, and checks whether it can open another process's memory (ptrace rights
over the runner). Success would let it re-seal an
edited run (``verify-log`` says ok) and spend the runner's accounts."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from redteam_harness import Accomplice, attack_command, attacker_dir, show

from gymforge.testing.openai_server import OpenAITestServer
from gymforge.testing.openai_server.fake import scripted_responder

SECRETS = {
    "GYMFORGE_SEAL_KEY": "seal-key-the-harness-must-never-see",
    "WANDB_API_KEY": "wandb-key-the-harness-must-never-see",
    "HF_TOKEN": "hf-token-the-harness-must-never-see",
}


def test_harness_sees_no_secret(gymforge_cli: Any, tmp_path: Path) -> None:
    with Accomplice() as acc, attacker_dir() as d:
        with OpenAITestServer(scripted_responder(["no"])) as upstream:
            policy = attack_command("env", acc, d / "attacker.py")
            r = gymforge_cli(
                "run",
                "ledger",
                "--policy",
                policy,
                "--base-url",
                upstream.base_url,
                "-n",
                "1",
                "--seed",
                "11",
                "--out",
                str(tmp_path / "run"),
                "--json",
                env=dict(SECRETS),
            )
        show(acc.reports)
    assert r.returncode == 0, r.stderr[-2000:]
    [report] = acc.reports
    assert "crashed" not in report, report
    seen = json.dumps(report)
    for name, value in SECRETS.items():
        assert value not in seen, f"the harness read {name}"
    # the only processes whose memory it can open are its own (the shell that runs it): the
    # runner is not even visible
    for pid, cmdline in report["mem_openable"].items():
        assert "attacker.py" in cmdline, (pid, cmdline)
    # the runner's working directory (the checkout here) is there by name only, empty; its
    # home is the episode's own directory (its prompt, its clients, its relay's sockets)
    assert report["cwd_listing"] == [], report["cwd_listing"]
    assert report["home_listing"] == ["bin", "net", "prompt.json"], report["home_listing"]
    own = report["own_env"]
    assert not [k for k in own if k.startswith("GYMFORGE_") and k not in ALLOWED]
    assert sys.executable not in seen  # nothing of the runner's command line or environment


ALLOWED = {"GYMFORGE_MODEL", "GYMFORGE_MCP_URL", "GYMFORGE_PROMPT_FILE", "GYMFORGE_EPISODE"}
