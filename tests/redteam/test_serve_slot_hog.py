"""Attack: one client opens sessions until it holds every slot of the server.

A single token holder on one address opens ``--max-sessions`` WebSocket sessions and sits
on them (each kept alive with pings until the idle reaper would act), so every other
client gets ``capacity``. Success of the attack would mean one client can deny service to
all others; the per-client cap (``--max-sessions-per-client``, by default a quarter of
``--max-sessions``, counted per token and address) must refuse it first.
"""

from __future__ import annotations

import contextlib

import pytest
from redteam_serve import TOKEN, Raw, from_address
from websockets.exceptions import ConnectionClosed

from gymforge.serve.config import ServeConfig
from gymforge.serve.launch import ServerThread


def test_one_client_cannot_hold_every_slot() -> None:
    config = ServeConfig(token=TOKEN, max_sessions=8)
    assert config.client_cap == 2  # a quarter of --max-sessions
    with ServerThread("ledger", config) as server, contextlib.ExitStack() as held:
        hog = [held.enter_context(Raw(server)) for _ in range(8)]
        admitted = [r for r in hog if r.hello["type"] == "hello"]
        refused = [r for r in hog if r.hello["type"] == "error"]
        assert len(admitted) == 2 and len(refused) == 6
        assert {r.hello["code"] for r in refused} == {"capacity"}
        assert "per client" in refused[0].hello["message"]
        with pytest.raises(ConnectionClosed) as closed:
            refused[0].recv(timeout=5)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1013
        other = held.enter_context(from_address(server, "127.0.0.2"))  # another client
        assert other.hello["type"] == "hello"
        assert other.ask({"type": "ping"})["type"] == "pong"
        admitted[0].close()  # a freed slot of the hog is the hog's again
        with Raw(server) as again:
            assert again.hello["type"] == "hello"


def test_the_cap_is_configurable_and_bounded() -> None:
    assert ServeConfig(max_sessions=3).client_cap == 1  # never zero
    assert ServeConfig(max_sessions=100, max_sessions_per_client=100).client_cap == 100
    with pytest.raises(Exception, match="max-sessions-per-client"):
        ServeConfig(max_sessions_per_client=0)
