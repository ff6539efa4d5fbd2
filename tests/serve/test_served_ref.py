"""A served environment's ref (``ws://HOST:PORT[/prefix]``) is read or refused with a
clear error, and a refused ref's password is never echoed back."""

from __future__ import annotations

import pytest

from gymforge.core.errors import UserError
from gymforge.serve.http import split_ref

SECRET = "s3cret"


@pytest.mark.parametrize(
    ("ref", "ws_url", "http_base"),
    [
        ("ws://127.0.0.1:9", "ws://127.0.0.1:9/ws", "http://127.0.0.1:9"),
        ("ws://127.0.0.1:9/ws", "ws://127.0.0.1:9/ws", "http://127.0.0.1:9"),
        ("wss://host:9/env/", "wss://host:9/env/ws", "https://host:9/env"),
        ("ws://[::1]:9", "ws://[::1]:9/ws", "http://[::1]:9"),
    ],
)
def test_a_ref_gives_its_websocket_and_http_urls(ref: str, ws_url: str, http_base: str) -> None:
    assert split_ref(ref) == (ws_url, http_base)


@pytest.mark.parametrize(
    ("ref", "reason"),
    [
        (f"ws://u:{SECRET}@127.0.0.1:9", "--token"),
        (f"ws:u:{SECRET}@127.0.0.1:9", "not a served environment ref"),
        (f"ws:/u:{SECRET}@127.0.0.1:9", "not a served environment ref"),
        (f"ws://u:{SECRET}@", "not a served environment ref"),
        (f"http://u:{SECRET}@127.0.0.1:9", "not a served environment ref"),
        ("127.0.0.1:9", "not a served environment ref"),
        ("ws://:9", "not a served environment ref"),
    ],
)
def test_a_ref_no_client_can_use_is_refused_without_its_password(ref: str, reason: str) -> None:
    with pytest.raises(UserError, match=reason) as info:
        split_ref(ref)
    assert SECRET not in str(info.value)
