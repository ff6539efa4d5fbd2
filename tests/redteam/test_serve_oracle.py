"""Attack: ask a server started with default flags for the hidden truth.

Any token holder sends ``oracle_action`` (the reference solution), ``POST /oracle/plan``,
or a red-team policy message, or reads the truth digest of a task (an unsalted hash of,
say, a number, which a dictionary of guesses inverts). Success of the attack would mean an
evaluation server hands its answers to the policy it evaluates unless its operator
remembered to turn the QA hooks off.
"""

from __future__ import annotations

import httpx
from redteam_serve import TOKEN, Raw, ServeProcess

from gymforge.serve.config import ServeConfig
from gymforge.serve.launch import ServerThread

TASK = "ledger.transfer/v1/d1/s3"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def test_a_default_server_refuses_everything_that_reveals_the_truth() -> None:
    with ServerThread("ledger", ServeConfig(token=TOKEN)) as server, Raw(server) as raw:
        raw.ask({"type": "reset", "task_id": TASK, "seed": 0, "id": 1})
        reply = raw.ask({"type": "oracle_action", "id": 2})
        assert reply["type"] == "error" and reply["code"] == "forbidden", reply
        for message in (
            {"type": "policy_start", "case": "any", "task_id": TASK, "seed": 0},
            {"type": "policy_act"},
        ):
            assert raw.ask(message)["code"] == "forbidden"
        reset = raw.ask({"type": "reset", "task_id": TASK, "seed": 0})
        assert reset["task"]["truth"] == {}, reset["task"]  # not even its digest
        plan = httpx.post(f"{server.http_url}/oracle/plan", json={"task_id": TASK}, headers=AUTH)
        assert plan.status_code == 403
        resolved = httpx.post(
            f"{server.http_url}/tasks/resolve", json={"task_id": TASK}, headers=AUTH
        ).json()
        assert resolved["task"]["truth"] == {}
        meta = httpx.get(f"{server.http_url}/metadata", headers=AUTH).json()
        assert meta["has_oracle"] is False and meta["server"]["qa_hooks"] is False


def test_the_serve_command_defaults_to_no_qa_hooks() -> None:
    server = ServeProcess("ledger", "--token", TOKEN)
    try:
        meta = httpx.get(f"http://127.0.0.1:{server.port}/metadata", headers=AUTH).json()
        assert meta["server"]["qa_hooks"] is False and meta["has_oracle"] is False
    finally:
        server.stop()


def test_qa_hooks_are_an_explicit_opt_in() -> None:
    config = ServeConfig(token=TOKEN, qa_hooks=True)
    with ServerThread("ledger", config) as server, Raw(server) as raw:
        raw.ask({"type": "reset", "task_id": TASK, "seed": 0})
        assert raw.ask({"type": "oracle_action"})["type"] == "action"
        assert set(raw.ask({"type": "reset", "task_id": TASK, "seed": 0})["task"]["truth"]) == {
            "sha256"
        }
