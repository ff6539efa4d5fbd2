"""The other side of ``test_harness_crash_hides_failure.py``: a harness that falls over
because its inference server failed it (a 500 after the harness had acted) is an
infrastructure error, retried and never scored, not the policy's failure. Success of a
policy here would be the opposite mistake: a server outage recorded as failed episodes,
which would train the policy on the outage. The server here goes down for good once the
harness acted (every later request fails, the episode's first request asked again too):
an outage, not a server failing only on the model's text
(``test_harness_upstream_fails_on_agent_text.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gymforge.testing.openai_server import (
    OpenAITestServer,
    ServedError,
    ServedReply,
    ServedToolCall,
)
from tests.serve.harness_agents import AGENTS, run_harness


def test_a_crash_after_the_server_failed_is_retried_and_never_scored(tmp_path: Path) -> None:
    down = []

    def respond(request: dict[str, Any]) -> ServedReply | str:
        if down or any(m.get("role") == "assistant" for m in request.get("messages", [])):
            down.append(True)
            raise ServedError(500, "the engine fell over")
        return ServedReply(tool_calls=(ServedToolCall("search_customers", {"name": "a"}),))

    with OpenAITestServer(respond) as upstream:
        result = run_harness(f"harness:{AGENTS}:crash_when_told", upstream, tmp_path, max_retries=1)
    assert result.errors and "answered 500" in str(result.errors[0]), result.errors
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["infra_retries"] == 1 and summary["infra_errors"] == 1
    path = tmp_path / "trajectories.jsonl"
    assert not path.exists() or path.read_text().count('"record":"episode"') == 0
