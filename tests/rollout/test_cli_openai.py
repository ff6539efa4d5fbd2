"""`gymforge run --policy openai:MODEL --base-url URL` end to end, then a trl export."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from gymforge.testing import OpenAITestServer
from gymforge.testing.openai_server import echo_responder


def test_run_with_an_openai_policy_then_export_tokens(tmp_path: Path) -> None:
    with OpenAITestServer(echo_responder) as server:
        cli = [sys.executable, "-m", "gymforge.cli"]
        run = subprocess.run(
            [
                *cli,
                "run",
                "math",
                "--policy",
                "openai:tiny",
                "--base-url",
                server.base_url,
                "-n",
                "4",
                "--group",
                "2",
                "--out",
                str(tmp_path),
                "--json",
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    assert summary["episodes"] == 8 and summary["infra_errors"] == 0
    steps = [
        json.loads(x)
        for x in (tmp_path / "trajectories.jsonl").read_text().splitlines()
        if '"record":"step"' in x
    ]
    turns = [s["policy"] for s in steps if s["policy"]]
    assert turns and all(
        t["capture_level"] == "tokens" and t["completion_token_ids"] for t in turns
    )
    exported = subprocess.run(
        [*cli, "export", str(tmp_path), "--format", "trl"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert exported.returncode == 0, exported.stderr
    rows = (tmp_path / "export.trl.jsonl").read_text().splitlines()
    assert len(rows) == 8 and json.loads(rows[0])["completion_ids"]
