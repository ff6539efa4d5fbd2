"""A workspace harness's commands print what looks like gymforge's own records (a step and
an episode record with reward 1), reward and verdict markers, mini-swe-agent's submit
marker, and a fake shell answer on stderr. Success would be any of it taken for more than a
command's output: an extra step, an episode record or reward that the environment did not
judge, a different exit code than the command's."""

from __future__ import annotations

import json
from pathlib import Path

from redteam_workspace import the_episode, workspace_attacker
from workspace_helpers import run_workspace

from tests.evaluate.eval_helpers import run_cli


def test_printed_records_stay_output(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with workspace_attacker("forge") as policy:
        result = run_workspace(policy, out)
    assert not result.errors, result.errors
    log, report = the_episode(out)
    ran = report["ran"]
    assert [r["exit"] for r in ran] == [0, 0, 0, 7]
    assert '"record": "episode"' in ran[0]["out"]  # the harness saw its own output, verbatim
    assert ran[3]["out"] == "" and '"exit_code": 0' in ran[3]["err"]
    # one briefing step, four commands, the final reply: nothing else was recorded
    kinds = [s.action.kind for s in log.steps[1:]]  # type: ignore[union-attr]
    assert kinds == ["tool_call"] * 5 + ["reply"]
    lines = (out / "trajectories.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    episodes = [r for r in records if r.get("record") == "episode"]
    assert len(episodes) == 1
    assert episodes[0]["reward"] <= 0 and not episodes[0]["success"], episodes[0]
    assert log.end is not None and not log.end.success
    # the printed text lives only inside the observations of the steps that printed it
    for r in records:
        if r.get("record") == "step" and '"record": "episode"' in str(r):
            assert '"record": "episode"' in str(r["observation"])
    assert run_cli("replay", out / "trajectories.jsonl").code == 0
