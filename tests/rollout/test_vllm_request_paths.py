"""The token-in ``vllm:`` policy's lean request path (its default) does what its SDK path
does: the same requests, the same recorded trajectories (multi-turn tool use, exact ids),
and every failure the same error, retries and exit code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openai_helpers import arun, ledger_oracle_responder
from test_vllm_policy import RESET, TASKS, factory, play_ledger

from gymforge.core.errors import UserError
from gymforge.core.policy import episode_context
from gymforge.core.seeding import canonical_json
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout.failures import exit_code, kind_of
from gymforge.rollout.server import Retry
from gymforge.rollout.vllm_policy import make_vllm_policy_factory
from gymforge.testing import OpenAITestServer

PATHS = ("fast", "lean")
RUN_SPECIFIC = ("run_id", "episode_id", "timestamp", "timing", "digest")
"""The fields two runs of the same jobs differ in (``trajectory.schema``)."""


def test_both_paths_send_the_same_requests_and_record_the_same_trajectories(
    tmp_path: Path,
) -> None:
    recorded, requests = {}, {}
    for path in PATHS:
        with OpenAITestServer(ledger_oracle_responder(TASKS)) as srv:
            result = play_ledger(srv, tmp_path / path, request_path=path)
            requests[path] = sorted(canonical_json(r) for r in srv.requests if "prompt" in r)
        assert not result.errors and all(e["success"] for e in result.episodes)
        lines = (tmp_path / path / "trajectories.jsonl").read_text(encoding="utf-8")
        recorded[path] = [
            canonical_json({k: v for k, v in json.loads(line).items() if k not in RUN_SPECIFIC})
            for line in lines.splitlines()
        ]
    assert requests["fast"] == requests["lean"] and len(requests["lean"]) > len(TASKS)
    assert recorded["fast"] == recorded["lean"]
    assert any('"completion_token_ids":[' in line for line in recorded["lean"])


def _outcome(path: str, server: OpenAITestServer) -> tuple[Any, ...]:
    retry = Retry(max_attempts=2, base_delay=0.01, max_delay=0.02, call_timeout=10.0)
    made = factory(server, request_path=path, retry=retry)

    async def go() -> BaseException | None:
        policy = made()
        try:
            await policy.start(episode_context(policy, LedgerEnv(), TASKS[0], 0))
            await policy.act(RESET)
            return None
        except Exception as err:
            return err
        finally:
            await made.aclose()

    err = arun(go())
    assert made.path() == path
    served = dict(server.served)
    if err is None:
        return ("ok", served)
    kind = kind_of(err)
    status = getattr(err, "status", None)
    message = str(err).replace(server.base_url, "URL")
    if "APIConnectionError" in message or "APITimeoutError" in message:
        message = "a cut connection"  # each transport words it its own way (the SDK's
        # aiohttp transport reports a reset as a timeout); both are retried alike
    return (type(err), message, kind, exit_code(kind), status, served)


FAULTS = ["429", "500", "503", "not-json", "no-choices", "reset", "drop", "context"]


@pytest.mark.parametrize("fault", [*FAULTS, "none"])
def test_a_failing_server_ends_a_turn_the_same_way_on_both_paths(fault: str) -> None:
    outcomes = {}
    for path in PATHS:
        with OpenAITestServer() as server:
            if fault != "none":
                server.inject(fault, fault)
            outcomes[path] = _outcome(path, server)
    assert outcomes["fast"] == outcomes["lean"]
    lean = outcomes["lean"]
    assert (lean[0] == "ok") is (fault == "none")
    assert lean[0] == "ok" or lean[2] != "bug", lean


def test_the_request_path_comes_from_the_spec_settings() -> None:
    assert make_vllm_policy_factory("vllm:m", request_path="fast").request_path == "fast"
    assert make_vllm_policy_factory("vllm:m").request_path == "auto"
    with pytest.raises(UserError, match="request_path must be auto, fast or lean"):
        make_vllm_policy_factory("vllm:m", request_path="typed")
