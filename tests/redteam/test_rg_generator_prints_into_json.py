"""Attack (by circumstance): a reasoning-gym dataset whose own code prints, under
``gymforge qa --json``.

reasoning-gym's tower_of_hanoi prints every instance it generates to stdout. ``qa --json``
promises one JSON document on stdout (and ``serve --mcp --transport stdio`` a clean protocol
stream); the prints came first, so the report did not parse. Success of the attack means
third-party output reaches gymforge's machine-readable stdout.
"""

from __future__ import annotations

import json
from typing import Any

from rg_attack import SCORER_UID_BASE


def test_qa_json_stays_one_json_document(gymforge_cli: Any) -> None:
    proc = gymforge_cli(
        "qa",
        "reasoning-gym:tower_of_hanoi",
        "--episodes",
        "2",
        "--check=replay_determinism",
        "--json",
        env={"GYMFORGE_SANDBOX_UID_BASE": str(SCORER_UID_BASE - 64)},
        timeout=600,
    )
    assert "Generating Instance" not in proc.stdout, proc.stdout[:300]
    report = json.loads(proc.stdout)
    assert [c["name"] for c in report["checks"]] == ["replay_determinism"], report
