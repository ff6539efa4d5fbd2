"""``world.clock.iso`` and ``epoch``: the documented text for every epoch second of the years
1000 to 9999, and each the other's inverse."""

from __future__ import annotations

from datetime import UTC, datetime

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
