"""``gymforge list`` marks reasoning-gym datasets whose own scorer pays a generic attack."""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

from gymforge.registry.listing import RG_FINDINGS, adapter_rows, rg_mark


def findings(tmp_path: Path, audited: str) -> Path:
    path = tmp_path / "findings.json"
    data = {
        "run": {"reasoning_gym": audited},
        "datasets": {
            "coin_flip": {"verdict": "failed", "oracle": True, "scorer_pays": ["constant_zero"]},
            "countdown": {
                "verdict": "passed",
                "strict": "gymforge.countdown",
                "scorer_pays": ["identity_to_target"],
            },
            "leg_counting": {"verdict": "passed", "scorer_pays": []},
            "propositional_logic": {"verdict": "not tested", "note": "no stored answer"},
        },
    }
    path.write_text(json.dumps(data))
    return path


def test_lax_scorers_are_marked_with_the_attack(tmp_path: Path) -> None:
    rows = {r["id"]: r for r in adapter_rows(findings(tmp_path, version("reasoning-gym")))}
    assert rows["reasoning-gym:coin_flip"]["qa"] == "scorer pays: constant_zero"
    assert rows["reasoning-gym:coin_flip"]["scorer_pays"] == ["constant_zero"]
    assert "strict verifier" in rows["reasoning-gym:countdown"]["qa"]
    assert "identity_to_target" in rows["reasoning-gym:countdown"]["qa"]
    assert rows["reasoning-gym:leg_counting"]["qa"] == "red team passed"
    assert rows["reasoning-gym:propositional_logic"]["qa"].startswith("not tested")
    assert {r["source"] for r in rows.values()} == {"adapter"}


def test_findings_from_another_reasoning_gym_release_are_unverified(tmp_path: Path) -> None:
    rows = adapter_rows(findings(tmp_path, "0.0.1"))
    assert all(r["qa"].startswith("unverified: audited on reasoning-gym 0.0.1") for r in rows)


def test_the_shipped_findings_mark_what_the_audit_found() -> None:
    data = json.loads(RG_FINDINGS.read_text())
    for name, found in data["datasets"].items():
        if found.get("scorer_pays") and not found.get("strict"):
            assert rg_mark(found).startswith("scorer pays: "), name
    assert data["datasets"]["countdown"]["verdict"] == "passed"
    assert data["datasets"]["countdown"]["strict"] == "gymforge.countdown"
