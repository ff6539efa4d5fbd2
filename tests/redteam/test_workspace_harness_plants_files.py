"""A workspace harness tries to change the workspace without its shell: it writes files
wherever it can (its working directory, /tmp, its home, /) and searches every directory it
can see for the workspace's files. Success would be an edit the environment never recorded
as a step (the judged repository differing from the replayed one) or the harness reading
the workspace (or the hidden tests) outside its recorded commands."""

from __future__ import annotations

from pathlib import Path

from redteam_workspace import the_episode, workspace_attacker
from workspace_helpers import run_workspace


def test_the_workspace_is_reachable_only_through_the_shell(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with workspace_attacker("writes") as policy:
        result = run_workspace(policy, out)
    assert not result.errors, result.errors
    _, report = the_episode(out)
    assert report["found_conftest"] == [], report["found_conftest"]  # no workspace in sight
    listing = report["workspace_listing"]
    assert listing["exit"] == 0 and "conftest.py" in listing["out"]  # the shell sees it
    assert "planted_by_harness.txt" not in listing["out"]
    assert report["planted_in_workspace"]["exit"] != 0
    wrote = report["wrote"]
    assert not wrote[str(Path.cwd() / "planted_by_harness.txt")].startswith("ok")
    assert not wrote["/planted_by_harness.txt"].startswith("ok")
    assert not (Path.cwd() / "planted_by_harness.txt").exists()
