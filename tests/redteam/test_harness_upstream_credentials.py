"""Attack: leak the inference server's password through a harness run's base URL.

The harness proxy takes an upstream URL that may carry ``user:password@`` (its aiohttp
client sends them as Basic auth, and ``/health`` never shows the URL), but the harness
run's first request, reading the model name from ``UPSTREAM/models``, went through
``urllib``, which takes everything before the host for the host: it asked the resolver for
``u:PASSWORD@127.0.0.1`` (the password leaves the machine in a DNS query) and failed with
an ``InfraError`` naming the URL, password and all, logged at every attempt of every
episode and kept in the run's errors. Success would be the password in the error, or the
model read failing where the proxy itself would reach the server; the defence sends the
request to the host alone, the credentials as the proxy sends them, and never shows them.
"""

from __future__ import annotations

import pytest

from gymforge.core.errors import InfraError
from gymforge.serve.harness.run import _first_model
from gymforge.testing import OpenAITestServer

SECRET = "s3cret"


def test_the_model_is_read_from_the_host_without_its_credentials() -> None:
    with OpenAITestServer() as server:
        model = _first_model(f"http://u:{SECRET}@127.0.0.1:{server.port}/v1", None)
        hosts = dict(server.hosts)
    assert model
    assert hosts == {("/v1/models", f"127.0.0.1:{server.port}"): 1}, hosts


@pytest.mark.parametrize(
    "upstream",
    [
        f"http://u:{SECRET}@127.0.0.1:9/v1",
        f"http://:{SECRET}@127.0.0.1:9/v1",
        f"http://u%3A{SECRET}@127.0.0.1:9/v1",
        f"http://u:{SECRET}@nowhere.invalid/v1",
    ],
)
def test_a_failed_model_read_never_shows_the_password(upstream: str) -> None:
    with pytest.raises(InfraError) as err:
        _first_model(upstream, None)
    assert SECRET not in str(err.value)
    assert "***@" in str(err.value)
