"""``gymforge qa harbor:PATH`` on the container engine: the shell task passes the checks a
Harbor task can supply, and the ones it cannot are not applicable with the reason."""

from __future__ import annotations

import json
import subprocess
import sys

from harbor_helpers import CONTAINERS, DATASET, cli_env

pytestmark = CONTAINERS


def test_qa_of_a_harbor_task_passes_and_names_what_it_cannot_supply() -> None:
    p = subprocess.run(
        [sys.executable, "-m", "gymforge.cli", "qa", f"harbor:{DATASET / 'hello-shell'}",
         "--episodes", "2", "--json"],
        capture_output=True, text=True, env=cli_env(), timeout=3600, check=False,
    )  # fmt: skip
    report = json.loads(p.stdout)
    status = {c["name"]: c for c in report["checks"]}
    assert len(status) == 10
    for name in ("throughput", "heldout_exclusion"):
        assert status[name]["status"] == "not_applicable"
        assert "Harbor" in status[name]["details"]
    for name in ("scripted_baselines", "verifier_redteam", "truncation_accounting"):
        assert status[name]["status"] == "pass", status[name]
    failed = {n: c["details"][:300] for n, c in status.items() if c["status"] == "fail"}
    assert not failed, failed
    assert p.returncode == 0
