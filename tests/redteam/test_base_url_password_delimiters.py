"""Attack: get a base URL's password printed by writing it with a character that ends the
host early.

``refuse_unusable`` refuses a base URL carrying ``user:password@`` and shows it as
``***@host``. But a password holding ``/``, ``?`` or ``#`` unencoded
(``http://u:pa/ss@host/v1``) ends the URL's authority there: the parser sees no ``@`` in it,
only a host ``u`` with the port ``pa``. Such a URL was taken (or, with ``?``, refused as
having a query and shown up to it: ``http://u:pa?...``), and every request then failed with
the SDK's ``Invalid port: 'pa'``: the password's first part in the error of each attempt of
each episode, and in the log. Success would be any error showing part of the password; the
defence refuses a port that is not a number as an unparsable URL and shows no URL that
holds an ``@`` anywhere.
"""

from __future__ import annotations

import pytest

from gymforge.core.errors import UserError
from gymforge.rollout.server import refuse_unusable
from tests.rollout.test_refuse_unusable_red12 import _sdk_misuses

SECRET = "s3cret"


@pytest.mark.parametrize(
    "base_url",
    [
        f"http://u:{SECRET}/x@127.0.0.1:9/v1",
        f"http://u:{SECRET}?x@127.0.0.1:9/v1",
        f"http://u:{SECRET}#x@127.0.0.1:9/v1",
        f"http://u:{SECRET}/?#@127.0.0.1:9/v1",
        f"http://u:{SECRET}?@127.0.0.1:9/v1?x=1",
        f"https://u:{SECRET}#@127.0.0.1/v1",
        f"http://u:{SECRET}%40127.0.0.1:9/v1",  # an encoded '@': no userinfo, the port is text
    ],
)
def test_a_password_cut_short_by_a_delimiter_is_refused_unshown(base_url: str) -> None:
    assert _sdk_misuses(base_url) in (None, True)  # the SDK cannot send it as given
    with pytest.raises(UserError) as err:
        refuse_unusable(base_url)
    assert SECRET not in str(err.value)


@pytest.mark.parametrize(
    "base_url",
    ["http://127.0.0.1:9/v1", "http://127.0.0.1/v1/", "https://[::1]:8443/v1", "http://h:0/v1"],
)
def test_a_numeric_port_is_still_taken(base_url: str) -> None:
    refuse_unusable(base_url)


def test_a_path_after_credentials_that_holds_an_at_sign_is_not_shown() -> None:
    with pytest.raises(UserError) as err:
        refuse_unusable(f"http://u@h/p:{SECRET}@host/v1?key={SECRET}#{SECRET}")
    assert SECRET not in str(err.value) and "***@h/..." in str(err.value)
