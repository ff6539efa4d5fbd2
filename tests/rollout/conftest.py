"""Fixtures for OpenAI-policy tests: a local OpenAI-compatible server and policy factories."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from openai_helpers import FAST_RETRY

from gymforge.rollout.openai_policy import OpenAIPolicyFactory, Sampling
from gymforge.testing import OpenAITestServer


@pytest.fixture
def server() -> Iterator[OpenAITestServer]:
    """An echo server on 127.0.0.1; tests swap ``server.responder`` as they need."""
    with OpenAITestServer() as srv:
        yield srv


@pytest.fixture
def make_factory(server: OpenAITestServer) -> Callable[..., OpenAIPolicyFactory]:
    """``make_factory(**options)``: a factory pointed at ``server`` with fast retries."""

    def make(**options: Any) -> OpenAIPolicyFactory:
        options.setdefault("retry", FAST_RETRY)
        options.setdefault("sampling", Sampling(temperature=0.7))
        return OpenAIPolicyFactory("test-model", base_url=server.base_url, **options)

    return make
