"""Attack: edit the record of an MCP server that was started with a seal key.

``gymforge run`` seals every record and the finished run when a seal key is given
(``GYMFORGE_SEAL_KEY`` or ``--seal-key-file``); ``gymforge serve --mcp --record FILE`` under
the same key must too, or anyone who can write the file can turn the agent's failures into
successes and ``verify-log`` has nothing to check. The attack plays one failing episode on a
served MCP environment, then rewrites the record into a success; success of the attack
would mean ``verify-log`` (with the key) accepts either file.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from redteam_mcp import TASK, TOKEN, McpServeProcess, http_from, mcp_client, open_session

KEY = "redteam-seal-key-0123456789"


async def _fail_once(url: str) -> None:
    async with mcp_client(url, TOKEN) as client:
        await client.call_tool("gymforge_reset", {"task_id": TASK, "seed": 0})
        await client.call_tool("gymforge_submit", {"reply": "done"})


def test_the_mcp_record_is_sealed(tmp_path: Path, gymforge_cli: Any) -> None:
    record = tmp_path / "mcp.jsonl"
    env = {"GYMFORGE_SEAL_KEY": KEY, "GYMFORGE_TOKEN": TOKEN}
    server = McpServeProcess("ledger", "--record", str(record), env=env)
    try:
        with http_from() as http:
            asyncio.run(_fail_once(open_session(http, server).json()["url"]))  # type: ignore[arg-type]
    finally:
        server.stop()  # SIGTERM: uvicorn shuts down gracefully, then re-raises the signal
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert [r["record"] for r in lines][-2:] == ["episode", "run_seal"], "no run seal"
    checked = gymforge_cli("verify-log", str(record), env={"GYMFORGE_SEAL_KEY": KEY})
    assert checked.returncode == 0, checked.stderr
    forged = tmp_path / "forged.jsonl"
    edited = []
    for rec in lines:
        if rec["record"] == "episode":
            rec.update(success=True, failure_reason=None)
        edited.append(json.dumps(rec))
    forged.write_text("\n".join(edited) + "\n")
    refused = gymforge_cli("verify-log", str(forged), env={"GYMFORGE_SEAL_KEY": KEY})
    assert refused.returncode != 0, "verify-log accepted an edited record"
