"""Attack: splice another run's successes into a failed run and relabel them.

The forger takes a sealed run whose policy failed every episode, replaces its episodes with
those of an oracle run on the same tasks, rewrites their run id, episode ids and policy
checkpoint to the failed run's, and recomputes the digest chains (success 0% -> 100%).
Success of the attack would mean that a keyed ``verify-log`` or ``replay`` accepts the
forged file, so a reported success rate could be manufactured after the fact.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from redteam_logs import KEY, cli, forge, ledger_run, read, success_rate


def splice(failed: Path, good: Path, target: Path, *, strip_seals: bool) -> None:
    victim, donor = read(failed), read(good)
    ends = [r for r in victim if r.get("record") == "episode"]
    run_id, checkpoint = ends[0]["run_id"], ends[0]["policy_checkpoint"]
    spliced = []
    for r in donor:
        if r.get("record") in ("step", "episode"):
            index = r["episode_id"].rsplit("-", 1)[1]
            r.update(run_id=run_id, episode_id=f"{run_id}-{index}", policy_checkpoint=checkpoint)
        spliced.append(r)
    if not strip_seals and victim[-1].get("record") == "run_seal":  # keep the victim's own
        spliced = [r for r in spliced if r.get("record") != "run_seal"] + [victim[-1]]
    forge(spliced, target, strip_seals=strip_seals)
    assert success_rate(read(target)) == 1.0 and success_rate(victim) == 0.0


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("splice")
    return ledger_run(base / "noop", "noop"), ledger_run(base / "oracle", "oracle")


@pytest.mark.parametrize("strip_seals", [False, True], ids=["stale-seals", "seals-stripped"])
def test_a_spliced_relabelled_run_is_refused_with_the_key(
    runs: tuple[Path, Path], tmp_path: Path, strip_seals: bool
) -> None:
    forged = tmp_path / "forged.jsonl"
    splice(*runs, forged, strip_seals=strip_seals)
    for command in ("verify-log", "replay"):
        out = cli(command, forged, key=KEY)
        assert out.code == 1, (command, out.stderr)
        assert "line 1" in out.stderr, out.stderr  # the first record is already wrong
        assert "seal" in out.stderr


def test_without_the_key_a_sealed_forgery_is_refused_not_waved_through(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    forged = tmp_path / "forged.jsonl"
    splice(*runs, forged, strip_seals=False)
    out = cli("verify-log", forged, key=None)
    assert out.code == 1 and "key" in out.stderr, out.stderr


def test_the_genuine_runs_verify_and_replay_with_the_key(runs: tuple[Path, Path]) -> None:
    for path in runs:
        out = cli("verify-log", path, key=KEY)
        assert out.code == 0, out.stderr
        assert "sealed" in out.stderr and "4 episodes" in out.stderr
        assert cli("replay", path, key=KEY).code == 0
