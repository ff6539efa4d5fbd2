"""Attack: grow the transcript until the policy's server refuses the request as too large.

A policy behind a gateway with a body limit (nginx's ``client_max_body_size``, an API
gateway, ``gymforge proxy --max-body-bytes``) gets ``413 Request Entity Too Large`` once the
transcript outgrows it, and what grows the transcript is the policy's own output: long
replies, unparseable tool calls the environment asks it to fix, tool results it asked for.
A 413 was read as a refused request (``PolicyRequestRejected``, a mistake), which stops the
whole run: the failing episode and every one not yet played go unscored. Success would be
any such episode missing from the summary; a 413 must end that episode as a full context
does (truncated, ``context_length``, counted), never the run.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout import LocalExecutor, RunSpec, run
from gymforge.rollout.openai_policy import OpenAIPolicyFactory
from gymforge.testing import OpenAITestServer
from gymforge.testing.openai_server import ServedError

LIMIT = 64 << 10
"""The gateway's body limit, in bytes of the transcript."""
FLOOD = "<tool_call>" + "{" * (2 * LIMIT)
"""An unparseable tool call: ``Invalid``, so the episode goes on with it in the transcript."""
TASKS = LedgerEnv.tasks.sample(3, 14)


def gateway(request: dict[str, Any]) -> str:
    """The model floods its first turn; the gateway refuses any larger request (413)."""
    if len(json.dumps(request["messages"])) > LIMIT:
        raise ServedError(413, "Request Entity Too Large")
    return FLOOD


def test_a_transcript_over_the_body_limit_ends_the_episode_not_the_run(tmp_path: Path) -> None:
    with OpenAITestServer(gateway) as srv:
        factory = OpenAIPolicyFactory("m", base_url=srv.base_url)
        spec = RunSpec(
            env="ledger",
            policy="openai:m",
            jobs=[(t, 0) for t in TASKS],
            out=tmp_path,
            max_retries=0,
        )
        executor = LocalExecutor(LedgerEnv, factory, close_policy=factory.aclose)
        result = asyncio.run(run(spec, executor))
    assert not result.errors
    assert result.summary["episodes"] == len(TASKS)
    assert result.summary["success_rate"] == 0.0
    for episode in result.episodes:
        assert episode["truncated"] and not episode["success"]
        assert episode["failure_reason"] == "context_length"
        assert episode["steps"] == 1  # the flood was played, then the next request refused
