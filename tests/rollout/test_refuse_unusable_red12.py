"""Red team (red12): ``server.refuse_unusable`` against what the OpenAI SDK would send.

A base URL is refused when the factory is made exactly when the SDK's request URL for it
carries a user or password (sent beside, or instead of, the API key) or a query (the
request's path appended after it). The truth is the SDK's own: the URL its client prepares
for ``chat/completions``. Found: ``http://@host/v1`` (an empty ``@``, which the SDK drops)
was refused as "carrying credentials", and a base URL ``urlsplit`` cannot parse
(``http://[::1/v1``) raised a ValueError, not the UserError the CLI reports. Found later: a
base URL naming no HTTP(S) host (``http:u:password@host/v1``, a missing ``//``) was taken,
and every episode of a run failed after its retries, the password in each error.
"""

from __future__ import annotations

import asyncio

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gymforge.core.errors import UserError
from gymforge.rollout.openai_policy import OpenAIPolicyFactory
from gymforge.rollout.server import refuse_unusable
from tests.budget import examples

SECRET = "s3cret"


def _refused(base_url: str) -> bool:
    """Whether ``refuse_unusable`` refuses ``base_url`` (any other exception fails), its
    error never showing the password."""
    try:
        refuse_unusable(base_url)
    except UserError as err:
        assert SECRET not in str(err)
        return True
    return False


def _sdk_misuses(base_url: str) -> bool | None:
    """Whether the SDK's request URL for ``base_url`` carries a user or password or a
    query, or names no HTTP(S) host; None when the SDK cannot make one."""
    try:
        client = openai.AsyncOpenAI(base_url=base_url, api_key="k")
        url = client._prepare_url("chat/completions")
    except Exception:  # the SDK's own refusal (httpx.InvalidURL and kin)
        return None
    no_server = url.scheme not in ("http", "https") or not url.host
    return bool(url.userinfo) or bool(url.query) or no_server


_URLS = [
    "http://127.0.0.1:9/v1",
    "http://@127.0.0.1:9/v1",
    "http://:@127.0.0.1:9/v1",
    "http://user@127.0.0.1:9/v1",
    f"http://:{SECRET}@127.0.0.1:9/v1",
    f"http://u:{SECRET}@127.0.0.1:9/v1",
    f"HTTP://u:{SECRET}@127.0.0.1:9/v1",
    f"//u:{SECRET}@127.0.0.1:9/v1",
    f"http://u%3A{SECRET}@127.0.0.1:9/v1",
    f"http://u:{SECRET}@127.0.0.1:9@x/v1",
    "http://127.0.0.1:9\\@evil/v1",
    "http://127.0.0.1:9/v1/@x",
    "http://127.0.0.1:9/v1#frag@x",
    "http://127.0.0.1:9/v1?",
    "http://127.0.0.1:9/v1?#",
    "http://127.0.0.1:9/v1#x?y",
    "http://127.0.0.1:9/v1?api-version=1",
    "http://127.0.0.1:9/v1\u3000?x",
    "http://127.0.0.1:9/v1%3Fa=1",
    "http://127.0.0.1:9/v1;p",
    "http://[::1]:9/v1",
    # found later: no host, so the SDK's request goes to none (the lean client's to port 80
    # of this machine), with the text after the scheme, password and all, in every error
    f"http:u:{SECRET}@127.0.0.1:9/v1",
    f"http:/u:{SECRET}@127.0.0.1:9/v1",
    "http:/127.0.0.1:9/v1",
    "http:///v1",
    f"http://u:{SECRET}@/v1",
    "http://:9/v1",
    "127.0.0.1:9/v1",
    "localhost:8000/v1",
    "//127.0.0.1:9/v1",
    "ftp://127.0.0.1:9/v1",
    "HTTPS://127.0.0.1:9/v1",
]


@pytest.mark.parametrize("base_url", _URLS)
def test_refused_exactly_when_the_sdk_could_not_use_it_as_given(base_url: str) -> None:
    sdk = _sdk_misuses(base_url)
    assert sdk is not None
    assert _refused(base_url) == sdk


@pytest.mark.parametrize(
    "base_url",
    [
        "http://[::1/v1",
        f"http://u:{SECRET}@[::1/v1",
        "http://ex\uff03ample/v1",
        f"http://u:{SECRET}@ex\uff03ample/v1",
    ],
)
def test_a_base_url_that_cannot_be_parsed_is_a_user_error(base_url: str) -> None:
    """The SDK cannot send to it either; the error is the CLI's kind and hides the
    password."""
    assert _sdk_misuses(base_url) is None
    assert _refused(base_url)


_USERINFO = st.sampled_from(["", "@", "u@", ":@", "u:@", f":{SECRET}@", f"u:{SECRET}@", "@@"])
_PATH = st.sampled_from(["", "/", "/v1", "/v1/", "/v1;x", "/a@b/v1", "/%3F"])
_QUERY = st.sampled_from(["", "?", "?a=1", "?#", "??"])
_FRAGMENT = st.sampled_from(["", "#", "#x", "#x?y", "#a@b"])


@examples(150)
def test_generated_base_urls_are_refused_as_the_sdk_would_misuse_them(examples: int) -> None:
    @settings(max_examples=examples, deadline=None)
    @given(
        st.sampled_from(["http://", "https://", "HTTP://", "http:", "http:/", "//", "", "ws://"]),
        _USERINFO,
        st.sampled_from(["127.0.0.1:9", "127.0.0.1", "", ":9", "[::1]:9"]),
        _PATH,
        _QUERY,
        _FRAGMENT,
    )
    def check(scheme: str, userinfo: str, host: str, path: str, query: str, fragment: str) -> None:
        base_url = f"{scheme}{userinfo}{host}{path}{query}{fragment}"
        sdk = _sdk_misuses(base_url)
        assert sdk is not None
        assert _refused(base_url) == sdk

    check()


def test_an_empty_at_sign_is_taken_and_never_sent() -> None:
    """The factory takes ``http://@host/v1``, and both request paths post to the host
    without it."""
    factory = OpenAIPolicyFactory("m", base_url="http://@127.0.0.1:9/v1", request_path="lean")

    async def urls() -> tuple[str, str]:
        try:
            _, lean = factory.lean()
            return lean, str(factory.client()._prepare_url("chat/completions"))
        finally:
            await factory.aclose()

    lean, sdk = asyncio.run(urls())
    assert "@" not in lean and "@" not in sdk
    assert sdk == "http://127.0.0.1:9/v1/chat/completions"
