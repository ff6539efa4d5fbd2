"""Attack: rewrite the recorded policy output (the training data) of a sealed run.

The forger edits the ``policy.text`` of recorded turns and recomputes the digest chains.
Two variants: a rewrite that no longer parses to the recorded action (caught by replay
even without a key, since replay re-parses each policy turn), and one that still parses to
the same action (reasoning text inserted before the call: only the seal can catch it).
Success of the attack would mean that training data can be altered after the run with
``verify-log`` and ``replay`` still accepting the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from redteam_logs import KEY, cli, forge, read, text_oracle_run


@pytest.fixture(scope="module")
def sealed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return text_oracle_run(tmp_path_factory.mktemp("text"))


def rewrite(records: list[dict[str, Any]], consistent: bool) -> int:
    """Rewrite the text of the first recorded tool-call turn; return its line number."""
    for n, r in enumerate(records, 1):
        text = (r.get("policy") or {}).get("text") or ""
        if "<tool_call>" in text:
            if consistent:
                r["policy"]["text"] = "Careful reasoning, added later. " + text
            else:
                r["policy"]["text"] = text.replace('"name": "', '"name": "forged_', 1)
                assert r["policy"]["text"] != text
            return n
    raise AssertionError("no tool-call turn recorded")


@pytest.mark.parametrize("consistent", [False, True], ids=["reparse-differs", "same-parse"])
@pytest.mark.parametrize("strip_seals", [False, True], ids=["stale-seals", "seals-stripped"])
def test_rewritten_policy_text_is_refused_with_the_key(
    sealed: Path, tmp_path: Path, consistent: bool, strip_seals: bool
) -> None:
    records = read(sealed)
    rewrite(records, consistent)
    forged = tmp_path / "forged.jsonl"
    forge(records, forged, strip_seals=strip_seals)
    for command in ("verify-log", "replay"):
        out = cli(command, forged, key=KEY)
        assert out.code == 1, (command, out.stderr)
        assert "seal" in out.stderr and "line " in out.stderr, out.stderr


def test_replay_catches_text_that_no_longer_parses_to_the_action_without_a_key(
    tmp_path: Path,
) -> None:
    records = read(text_oracle_run(tmp_path / "plain", key=None))
    line = rewrite(records, consistent=False)
    forged = tmp_path / "forged.jsonl"
    forge(records, forged, strip_seals=True)
    assert cli("verify-log", forged, key=None).code == 0  # a consistent unkeyed chain
    out = cli("replay", forged, key=None)
    assert out.code == 1, out.stderr
    step = records[line - 1]["step"]
    assert f"step {step}" in out.stderr and "policy" in out.stderr, out.stderr


def test_the_genuine_text_run_replays_with_the_key(sealed: Path) -> None:
    out = cli("replay", sealed, key=KEY)
    assert out.code == 0, out.stderr
