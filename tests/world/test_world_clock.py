"""``world.clock.iso`` and ``epoch``: the documented text for every epoch second of the years
1000 to 9999, and each the other's inverse."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from gymforge.world.clock import epoch, iso

FIRST = int(datetime(1000, 1, 1, tzinfo=UTC).timestamp())
LAST = int(datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC).timestamp())
SECONDS = st.one_of(
    st.integers(FIRST, LAST),
    st.integers(0, 4_102_444_800),  # 1970-2100, where generated worlds live
    st.sampled_from([FIRST, LAST, -1, 0, 951_782_400, 4_107_542_399]),  # ends, 2000-02-29
)


@given(SECONDS)
def test_iso_is_the_datetime_text(second: int) -> None:
    assert iso(second) == datetime.fromtimestamp(second, tz=UTC).isoformat()[:19] + "Z"


@given(SECONDS)
def test_epoch_reads_iso_back(second: int) -> None:
    assert epoch(iso(second)) == second
    assert epoch(iso(second)[:10]) == second - second % 86_400


def _text_or_error(f: Any, second: Any) -> str:
    try:
        return str(f(second))
    except (ValueError, OverflowError) as err:
        return type(err).__name__


def _datetime_iso(second: Any) -> str:
    return datetime.fromtimestamp(second, tz=UTC).isoformat()[:19] + "Z"


@given(
    st.one_of(
        st.integers(-(10**14), 10**14),  # years before 1000 and after 9999, both ways
        st.floats(-1e13, 1e13),  # a float epoch (a caller's time.time()), rounded as datetime
        st.sampled_from(
            [FIRST - 1, LAST + 1, -62_135_596_800, -62_135_596_801, 1.9999999, -0.0000001]
        ),
        st.sampled_from([math.nan, math.inf, -math.inf, 10**30, True]),
    )
)
def test_iso_outside_its_years_is_what_datetime_made_of_it(second: Any) -> None:
    """An epoch outside the years 1000 to 9999, or not an int, is what ``iso`` always made of
    it: the datetime text or its error, never ``strftime``'s unpadded ``999-...`` or
    ``10000-...`` (text that ``epoch`` cannot read back), nor a float truncated where
    datetime rounds it to the microsecond (``1.9999999`` is ``...:02``)."""
    assert _text_or_error(iso, second) == _text_or_error(_datetime_iso, second)
