"""What the mini-swe-agent tests share: where its venv is, the harness command that runs the
example under it, and the token-exactness check (the scripted model that plays a fix as
``bash`` tool calls is the example's own, ``examples.mini_swe_agent.scripted``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("MINI_SWE_AGENT_VENV") or ROOT / ".venv-mini-swe-agent")
AGENT = ROOT / "examples" / "mini_swe_agent" / "agent.py"


def mini_swe_agent_policy() -> str:
    """``harness-cmd:`` running the example under the mini-swe-agent venv, or a skip saying
    how to build it (``make test-harness`` builds it first)."""
    python = VENV / "bin" / "python"
    if not python.exists():
        pytest.skip(f"no {VENV}: run scripts/mini_swe_agent_setup.sh (make test-harness does)")
    return f"harness-cmd:{python} {AGENT}"


def assert_token_exact(turns: Sequence[dict[str, Any]], *, one_branch: bool = True) -> None:
    """Every turn has token ids, and each turn's prompt ids begin with the previous turn's
    (on its branch) prompt and completion ids: an extending sequence, as the model saw it.
    ``one_branch``: the whole episode is one such sequence (a harness that drops a turn from
    its history, as mini-swe-agent drops a malformed answer, starts a new branch)."""
    assert turns, "no model turns were recorded"
    for turn in turns:
        assert turn["capture_level"] == "tokens", turn["capture_level"]
        assert turn["prompt_token_ids"] and turn["completion_token_ids"]
    last: dict[int, dict[str, Any]] = {}
    for turn in turns:
        before = last.get(turn["branch"])
        if before is not None:
            seen = before["prompt_token_ids"] + before["completion_token_ids"]
            assert turn["prompt_token_ids"][: len(seen)] == seen, (before["index"], turn["index"])
            assert len(turn["prompt_token_ids"]) > len(seen)
        last[turn["branch"]] = turn
    if one_branch:
        assert {t["branch"] for t in turns} == {0}
