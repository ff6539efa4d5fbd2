"""QA finds libfaketime as it is installed (issue 36).

QA said "faketime not installed" on a machine where it was: it looked only for the
``faketime`` command on ``PATH``, while Debian and Ubuntu ship the preload library
(``libfaketime.so.1`` under ``/usr/lib/<multiarch>/faketime/``, package ``libfaketime``)
without it. These tests run against the libfaketime installed here (skipped without one).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gymforge.qa import clock
from gymforge.qa.fresh import CLOCK_SHIFT_S, FreshProcess

INSTALLED = sorted(
    str(p)
    for pattern in ("/usr/lib/*/faketime/libfaketime.so.1", "/usr/lib*/faketime/libfaketime.so.1")
    for p in Path("/").glob(pattern.lstrip("/"))
)
needs_library = pytest.mark.skipif(not INSTALLED, reason="no libfaketime library installed")


@needs_library
def test_the_installed_library_is_found() -> None:
    found = clock.find_faketime()
    assert found is not None and str(found.library) in INSTALLED


@needs_library
def test_the_clock_is_shifted_without_the_faketime_command_on_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # the library package alone
    proc = FreshProcess("digits")
    try:
        ready = proc.ready()
        assert proc.clock_shift == CLOCK_SHIFT_S, proc.describe()
        assert ready["time"] - time.time() > CLOCK_SHIFT_S / 2
        assert "not installed" not in proc.describe()
    finally:
        proc.close()


def test_without_libfaketime_the_report_says_where_it_looked(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(clock, "library_dirs", lambda: [tmp_path / "faketime"])
    proc = FreshProcess("digits")
    try:
        proc.ready()
        assert proc.clock_shift is None
        assert f"no libfaketime.so.1 in {tmp_path / 'faketime'}" in proc.describe()
    finally:
        proc.close()
