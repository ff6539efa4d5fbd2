"""Two ``harness-cmd:`` episodes run at once; each learns the other's MCP and proxy URLs
(here through an accomplice on the loopback network: a URL is no secret once leaked) and
calls them with its own token: a tool call inside the sibling's episode, a model request
recorded as the sibling's. Success would let one rollout of a GRPO group sabotage the others
(their rewards, their training tokens)."""

from __future__ import annotations

from pathlib import Path

from redteam_harness import Accomplice, attack_command, attacker_dir, run_attack, show

from gymforge.trajectory.io import read_episodes


def test_a_harness_token_opens_only_its_own_episode(tmp_path: Path) -> None:
    with Accomplice() as acc, attacker_dir() as d:
        result = run_attack(
            attack_command("tools", acc, d / "attacker.py"), tmp_path, n=2, concurrency=2
        )
        show(acc.reports)
    assert not result.errors, result.errors
    assert len(acc.reports) == 2
    for report in acc.reports:
        assert "crashed" not in report, report
        assert report["sibling"], "the accomplice never passed the URLs on"
        status, _ = report["sibling_tool_call"]
        assert status in (401, 403), report["sibling_tool_call"]
        status, _ = report["sibling_chat"]
        assert status in (401, 403), report["sibling_chat"]
    # neither harness called a tool or the model of its own: no episode holds a tool step
    # or a model turn
    for log in read_episodes(tmp_path / "trajectories.jsonl"):
        for step in log.steps[1:]:
            assert step.action is not None and step.action.kind == "reply"
            assert step.policy is not None and not step.policy.model_turns
