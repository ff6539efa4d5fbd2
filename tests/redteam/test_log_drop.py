"""Attack: delete the failed episodes of a sealed run.

Episodes are chained one by one, so removing whole episodes needs no re-chaining at all;
the forger also tries dropping the run seal, and re-labelling the kept episodes so their
indices look contiguous. Success of the attack would mean a keyed ``verify-log`` or
``replay`` accepts a run whose success rate was raised by hiding its failures.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from redteam_logs import KEY, cli, forge, ledger_run, read, success_rate


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # seed 2: failures first and between successes, the last a success (ledger.transfer v2's
    # tasks; seed 4 gave that shape on version 1's)
    path = ledger_run(tmp_path_factory.mktemp("drop"), "skilled:0.5", n=8, seed=2)
    outcomes = [r["success"] for r in read(path) if r.get("record") == "episode"]
    assert outcomes[0] is False and any(outcomes), outcomes  # a failure before successes
    return path


def without_failures(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    failed = {r["episode_id"] for r in records if r.get("record") == "episode" and not r["success"]}
    return [r for r in records if r.get("episode_id") not in failed]


@pytest.mark.parametrize("variant", ["keep-run-seal", "drop-run-seal", "strip-seals"])
def test_a_run_with_its_failures_deleted_is_refused_with_the_key(
    mixed: Path, tmp_path: Path, variant: str
) -> None:
    kept = without_failures(read(mixed))
    if variant == "drop-run-seal":
        kept = [r for r in kept if r.get("record") != "run_seal"]
    forged = tmp_path / "forged.jsonl"
    forge(kept, forged, strip_seals=variant == "strip-seals")
    assert success_rate(read(forged)) == 1.0
    for command in ("verify-log", "replay"):
        out = cli(command, forged, key=KEY)
        assert out.code == 1, (command, variant, out.stderr)
        assert "line " in out.stderr and "seal" in out.stderr, out.stderr


def test_a_cut_off_tail_is_unfinished_not_complete(mixed: Path, tmp_path: Path) -> None:
    """Cutting the file (here mid-episode) leaves what an interrupted run leaves behind:
    reported as unfinished (exit 3), never as a complete, sealed run. (Deleting the failures
    of a run whose failures all come last is such a cut, and is reported the same way.)"""
    records = read(mixed)
    last_end = max(i for i, r in enumerate(records[:-1]) if r.get("record") == "episode")
    cut = tmp_path / "cut.jsonl"
    forge(records[: last_end - 3], cut, strip_seals=False)  # mid-episode: a torn tail too
    out = cli("verify-log", cut, key=KEY)
    assert out.code == 3, out.stderr
    assert "unfinished" in out.stderr
