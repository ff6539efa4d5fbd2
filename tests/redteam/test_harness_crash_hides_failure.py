"""Attack: a model that makes its own harness crash once it has acted.

A harness that raised or exited non-zero was an infrastructure error: retried and never
scored. So a policy that was failing could end the episode by making its harness fall over
(a reply the harness cannot parse, a context it overflows) and turn its failure into an
unscored episode: it never lowers the success rate, and a retry is another draw. Success
means the episode in which the harness crashed after the model had acted is missing from
the record and from the summary's episode count. After the fix it is a counted failure,
truncated with the reason ``harness_crashed``; a crash before the model has spoken stays an
infrastructure error (``tests/serve/test_harness.py``), and so does one after the inference
server failed (``test_harness_crash_after_upstream_failure_is_infra.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

from gymforge.testing.openai_server import (
    OpenAITestServer,
    ServedReply,
    ServedToolCall,
    scripted_responder,
)
from gymforge.trajectory.io import read_episodes
from tests.serve.harness_agents import AGENTS, run_harness


def test_a_crash_after_the_model_acted_is_a_counted_failure(tmp_path: Path) -> None:
    replies = scripted_responder(
        [
            ServedReply(tool_calls=(ServedToolCall("search_customers", {"name": "a"}),)),
            "CRASH",
        ]
    )
    with OpenAITestServer(replies) as upstream:
        result = run_harness(f"harness:{AGENTS}:crash_when_told", upstream, tmp_path, max_retries=2)
    assert not result.errors, result.errors
    [log] = read_episodes(tmp_path / "trajectories.jsonl")
    assert log.end is not None and log.end.truncated and not log.end.success
    assert log.end.failure_reason == "harness_crashed"
    assert [s.action.kind for s in log.steps[1:]] == ["tool_call"]  # type: ignore[union-attr]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["episodes"] == 1 and summary["infra_retries"] == 0
