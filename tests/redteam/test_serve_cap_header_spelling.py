"""Attack: evade the per-client session cap by spelling the same token differently.

The per-client cap (``--max-sessions-per-client``) counts sessions per client. One client
with one token sends ``Authorization`` as ``Bearer T``, ``bearer T``, ``BEARER T``,
``Bearer  T`` (two spaces), ``Bearer T `` and so on: every spelling authenticates, and if
each counted as another client, one client would fill the whole server (WebSocket and MCP
alike). On a server without a token, any header at all would do. Success of the attack
would mean the cap that keeps one client from denying service to the others is void.
"""

from __future__ import annotations

import contextlib

from redteam_mcp import http_from, mcp_server
from redteam_serve import TOKEN, Raw

from gymforge.serve.config import ServeConfig

SPELLINGS = [
    f"Bearer {TOKEN}",
    f"bearer {TOKEN}",
    f"BEARER {TOKEN}",
    f"Bearer  {TOKEN}",
    f"Bearer {TOKEN} ",
    f"Bearer \t{TOKEN}",
    f"  Bearer {TOKEN}",
    f"bEaReR   {TOKEN}  ",
]


def _ws_admitted(server: object, headers: list[str], token: str | None) -> int:
    with contextlib.ExitStack() as held:
        sessions = [
            held.enter_context(Raw(server, token=None, headers={"Authorization": h}))  # type: ignore[arg-type]
            for h in headers
        ]
        refused = [s.hello for s in sessions if s.hello["type"] == "error"]
        assert {r["code"] for r in refused} <= {"capacity"}, refused
        return len(sessions) - len(refused)


def test_token_spellings_share_one_cap_over_websocket(serve: object) -> None:
    server = serve(token=TOKEN, max_sessions=8)  # type: ignore[operator]
    cap = ServeConfig(max_sessions=8).client_cap
    admitted = _ws_admitted(server, SPELLINGS, TOKEN)
    assert admitted == cap, f"{admitted} sessions of one client admitted; the cap is {cap}"


def test_any_header_is_one_client_on_a_server_without_a_token(serve: object) -> None:
    server = serve(max_sessions=8)  # type: ignore[operator]
    headers = [f"Bearer made-up-{i}" for i in range(8)]
    admitted = _ws_admitted(server, headers, None)
    assert admitted == ServeConfig(max_sessions=8).client_cap


def test_token_spellings_share_one_cap_over_mcp() -> None:
    with mcp_server(token=TOKEN, max_sessions=8) as server, http_from(token=None) as http:
        codes = [
            http.post(f"{server.http_url}/sessions", headers={"Authorization": h}).status_code
            for h in SPELLINGS
            if h == h.strip()  # httpx refuses to send a header with outer whitespace
        ]
        assert codes.count(201) == ServeConfig(max_sessions=8).client_cap, codes
        assert set(codes) == {201, 503}, codes
