"""Attack: fill the MCP transport-session pool from one client.

Every handshake-era ``initialize`` on a session's ``/mcp/ID`` URL opens a transport session
in the server, which lives until it has been idle for ``--idle-timeout``. One client that
holds a single session sends ``initialize`` over and over; if the transport sessions of
every client came from one shared pool, the pool would fill and every other client's
handshake would get 503 for the whole idle timeout. Success of the attack would mean one
client denies the MCP server to all others with one session.
"""

from __future__ import annotations

from redteam_mcp import TOKEN, http_from, initialize, mcp_server, open_session


def test_one_client_cannot_exhaust_the_transport_pool() -> None:
    with (
        mcp_server(token=TOKEN, max_sessions=4) as server,
        http_from("127.0.0.1") as hog,
        http_from("127.0.0.2") as other,
    ):
        url = open_session(hog, server).json()["url"]
        codes = [initialize(hog, url).status_code for _ in range(4 * 4 + 4)]
        assert 200 in codes, codes  # the hog's first handshakes are served
        refused = codes.count(503)
        assert refused > 0, f"one session opened {codes.count(200)} transport sessions"
        theirs = open_session(other, server)
        assert theirs.status_code == 201, theirs.text
        handshake = initialize(other, theirs.json()["url"])
        assert handshake.status_code == 200, (
            f"another client's handshake got {handshake.status_code} while one client "
            f"holds {codes.count(200)} transport sessions: {handshake.text[:200]}"
        )
